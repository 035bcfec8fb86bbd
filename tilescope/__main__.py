from tilescope.cli import main

raise SystemExit(main())
