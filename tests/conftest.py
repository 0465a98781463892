import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
# the example programs the tests check (examples/loop_programs.py), importable by name
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
os.environ.setdefault("TVM_NUM_THREADS", "2")
