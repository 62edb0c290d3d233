"""The `cowork` command-line client: a REPL over the protocol."""
