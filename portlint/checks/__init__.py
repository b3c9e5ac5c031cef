"""Check functions, one module per rule family; `portlint.registry` maps codes to them."""
