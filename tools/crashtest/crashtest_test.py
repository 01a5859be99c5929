#!/usr/bin/python3
"""crashtest.py against the real server and bots: one kill must recover the same world and pass; a
server that cannot start must end the run at once, naming its exit status (it used to be waited
on for 30 s); a --dir that is a file must be a one-line error. The tool had no test of its own.

  crashtest_test.py BIN_DIR
"""
import os
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CRASHTEST = os.path.join(HERE, "crashtest.py")


def free_base_port(span):
    """A UDP port p with p..p+span-1 free now (the server takes its lobby port and one per worker)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + span > 65535:
            continue
        held = []
        try:
            for p in range(base, base + span):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                held.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no free port range")


def run(args, timeout):
    return subprocess.run([sys.executable, CRASHTEST] + args, capture_output=True, text=True, timeout=timeout)


def main():
    bin_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="aftershock-crashtest-test-") as tmp:
        a_file = os.path.join(tmp, "a_file")
        open(a_file, "w").close()
        out = run(["--bin", bin_dir, "--dir", a_file], timeout=60)
        assert out.returncode != 0 and f"--dir {a_file} exists and is not a directory" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr, out.stderr

        # A bad server flag: the server exits at once with status 2, and so must the run.
        out = run(["--bin", bin_dir, "--dir", os.path.join(tmp, "bad"), "--kills", "1", "--bots", "2",
                   "--threads", "0", "--port", str(free_base_port(4))], timeout=20)
        assert out.returncode == 1 and "the server did not start (exited 2)" in out.stdout + out.stderr, \
            (out.stdout, out.stderr)

        out = run(["--bin", bin_dir, "--dir", os.path.join(tmp, "run"), "--kills", "1", "--bots", "8",
                   "--threads", "2", "--min-interval", "1", "--max-interval", "2", "--settle", "1",
                   "--port", str(free_base_port(4))], timeout=240)
        print(out.stdout[-2000:], out.stderr[-2000:])
        assert out.returncode == 0, out.returncode
        assert "state hash matches:                 1/1" in out.stdout, out.stdout
        assert "bots durability violations:         0" in out.stdout, out.stdout
        assert out.stdout.rstrip().endswith("PASS"), out.stdout[-200:]
    print("crashtest_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
