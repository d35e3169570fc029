"""Code navigation facts from source bytes: which language a file is in, its definitions,
and the uses of a name (tree-sitter). Pure: no I/O, no policy; the tools decide what may
be parsed and what is shown."""
