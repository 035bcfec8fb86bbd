from tilescope.cli import main

# Guarded: Dask's worker processes are spawned, and re-import the main module of their parent.
if __name__ == "__main__":
    raise SystemExit(main())
