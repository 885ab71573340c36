-- expect: must 'return { ... }' a table, returned number
return 42
