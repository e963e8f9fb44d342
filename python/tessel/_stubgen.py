import sys, pathlib
pathlib.Path(sys.argv[1], "__init__.pyi").write_text("")
