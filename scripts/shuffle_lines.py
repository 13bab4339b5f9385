"""Write the lines of SRC to DST in the order random.Random(SEED) shuffles them (the shuffled
orders of scripts/accuracy.sh and scripts/page_orders.sh).

    python3 scripts/shuffle_lines.py SRC SEED DST
"""
import random
import sys

lines = open(sys.argv[1], encoding="utf-8").readlines()
random.Random(int(sys.argv[2])).shuffle(lines)
open(sys.argv[3], "w", encoding="utf-8").writelines(lines)
