"""The file to hand spark-submit: it runs :func:`geocompact.spark.main`
with the flags of ``geocompact rewrite`` and exits with its code.

    spark-submit "$(python -c 'import geocompact.spark_submit as m; print(m.__file__)')" \\
        --table gis.pings --curve hilbert

spark-submit runs a file, not a module, so this file imports the package
by its name (the package's own modules import each other relatively,
which a file run as a script cannot).
"""

from __future__ import annotations

import sys

from geocompact.spark import main

if __name__ == "__main__":
    sys.exit(main())
