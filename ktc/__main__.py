import sys

from ktc.cli.commands import main

sys.exit(main())
