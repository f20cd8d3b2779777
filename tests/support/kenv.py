"""The environment of the kubectl runs of the Python helpers: tests/lib/kubesim.sh's kubectl
function (one thread of Go code, fewer garbage collections) for a program that runs thousands
of times in a parallel test run.

  from kenv import KUBECTL_ENV
  subprocess.run(["kubectl", ...], env=KUBECTL_ENV)
"""
import os

KUBECTL_ENV = dict(os.environ, GOMAXPROCS="1", GOGC="400")
