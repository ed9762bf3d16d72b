"""turbocql imports without opentelemetry; asking for tracing then says what to install."""

import subprocess
import sys

CODE = """
import sys
sys.modules['opentelemetry'] = None  # import opentelemetry raises ImportError
import turbocql.cluster, turbocql.concurrent, turbocql.tracing
try:
    turbocql.tracing.instrument(turbocql.cluster.Cluster(['127.0.0.1']))
except ImportError as e:
    assert 'opentelemetry-api' in str(e) and 'turbocql[opentelemetry]' in str(e), e
    print('ok')
"""


def test_import_without_opentelemetry():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr
