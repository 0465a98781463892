import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("TVM_NUM_THREADS", "2")
