"""The graph as data: the model, reading and saving TOML, validation, topology and paths."""
