#!/usr/bin/env python3
"""Write tests/fixtures/crc.parquet: three rows (id, text) whose pages carry a CRC, as
pyarrow writes them with `write_page_checksum=True` (arrow-rs writes none). Needs pyarrow;
the file is committed, so the tests do not.

    python3 scripts/make_crc_parquet.py tests/fixtures/crc.parquet
"""
import sys

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = {
    "id": ["zh-1", "en-2", "en-3"],
    "text": [
        "市政府今天宣布，新的地铁线路将于明年春季开通，全长三十二公里，设站二十四座。",
        "The council voted on Tuesday to extend the library's opening hours through the winter.",
        "Rain is expected across the northern valleys on Friday, with snow above 1,500 metres.",
    ],
}

pq.write_table(
    pa.table(ROWS),
    sys.argv[1],
    write_page_checksum=True,
    compression="NONE",
    use_dictionary=False,
)
