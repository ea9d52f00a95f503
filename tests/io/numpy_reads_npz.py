"""Does NumPy read an .npz that attn wrote? Prints one line per member, in archive order:

    <name> <dtype> [<shape>]            e.g.  softmax.weights float32 [1,2,4,4]
    <name> str [] json                  a 0-d string that json.loads reads (attn's config)

Usage: /usr/bin/python3 tests/io/numpy_reads_npz.py FILE.npz
Loads with allow_pickle=False, reads every member whole, and exits 1 with a message on
stderr if NumPy cannot (the CLI tests call it; the unit tests never need Python).
"""

import json
import sys

import numpy as np


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: numpy_reads_npz.py FILE.npz")
    try:
        with np.load(sys.argv[1], allow_pickle=False) as z:
            for name in z.files:
                a = z[name]
                shape = "[" + ",".join(str(s) for s in a.shape) + "]"
                if a.dtype.kind == "U":
                    text = str(a)
                    try:
                        json.loads(text)
                        print(name, "str", shape, "json")
                    except ValueError:
                        print(name, "str", shape)
                else:
                    print(name, a.dtype.name, shape)
    except Exception as e:  # noqa: BLE001 - any failure means NumPy cannot read it
        sys.exit("numpy cannot read %s: %s: %s" % (sys.argv[1], type(e).__name__, e))


if __name__ == "__main__":
    main()
