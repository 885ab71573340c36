-- expect: failed while running:
return { name = "x", heads = os.getenv("HOME") }
