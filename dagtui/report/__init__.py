"""What a run leaves behind: result records, traces, streamed results and report files."""
