import sys

from srfabric.cli import main

sys.exit(main())
