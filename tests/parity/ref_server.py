"""A fork server for the parity reference scripts (test-only).

Each parity test runs a reference script (tests/parity/ref_*.py). Started on
its own, every script first imports torch, torchvision and transformers,
which takes 7 to 10 s on a 2-core machine: more than the script's own work
for most models, and paid by every one of the parity label's tests.

This server imports those packages once, then forks a child per request. The
child runs the script as `python script args...` would (`__main__`, its own
folder first on sys.path, the client's environment and working directory,
stdout and stderr to the client's log file) and reports its exit status.
Nothing a script does reaches the server or another script: each runs in its
own process, forked from a server that has only imported packages.

  ref_server.py start --socket PATH [--idle-exit S]   daemon; returns once it serves
  ref_server.py stop --socket PATH                    stops the daemon of PATH

The daemon exits when the process that started it (ctest) has exited, and,
given --idle-exit, after that many seconds without a request. The fixture
gives none: ctest may run other tests for half an hour before the first
parity test (in the clean-clone run of 2026-11-29 a 1,800 s idle limit
ended the server before it, and every parity test started its own Python).
The ctest fixture ref_server (tests/CMakeLists.txt) starts it before the
parity tests; there is no cleanup test, because ctest runs the tests that a
cleanup test waits for before any other test, whatever their cost, and the
longest test would then start last. tests/parity/parity.cc connects to the
socket named by TORCHGAUGE_REF_SERVER and runs the script itself when
nothing answers.

Protocol: the client sends one JSON line {"script", "args", "log", "cwd",
"env"}; the server answers one line with the exit status (a signal's number
negated when the child was killed).
"""
import argparse
import json
import os
import signal
import socket
import sys
import time
import traceback

# What the reference scripts import, in the order they need it. A package
# that is missing is left to the script that imports it to report.
PRELOAD = [
    "numpy",
    "torch",
    "torch.nn",
    "torch.jit._pickle",
    "torch.utils.flop_counter",
    "torchvision",
    "torchvision.models",
    "torchvision.models.detection",
    "torchvision.ops",
    "transformers",
    "transformers.modeling_utils",
    "timm",
]


def preload():
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in PRELOAD:
            try:
                importlib.import_module(name)
            except ImportError as e:
                print(f"ref_server: not preloaded: {name} ({e})", flush=True)


def run_child(conn, request):
    """In the forked child: run one script, send its status, exit."""
    status = 1
    try:
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        script = request["script"]
        sys.argv = [script] + list(request["args"])
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        import runpy

        try:
            runpy.run_path(script, run_name="__main__")
            status = 0
        except SystemExit as e:
            if e.code is None:
                status = 0
            elif isinstance(e.code, int):
                status = e.code
            else:
                print(e.code, file=sys.stderr)
                status = 1
        except BaseException:
            traceback.print_exc()
            status = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        try:
            conn.sendall(f"{status}\n".encode())
        except OSError:
            pass
        os._exit(status & 0xFF if status >= 0 else 1)


def read_request(conn):
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            raise ValueError("connection closed before the request's end")
        data += chunk
    return json.loads(data)


def handle(conn):
    """In a first fork: fork the script's child, wait for it, and report a
    death by signal, which the child cannot report itself."""
    request = read_request(conn)
    pid = os.fork()
    if pid == 0:
        run_child(conn, request)
    _, wait_status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(wait_status):
        try:
            conn.sendall(f"{-os.WTERMSIG(wait_status)}\n".encode())
        except OSError:
            pass


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def serve(sock, idle_exit, owner):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the handlers
    sock.settimeout(10)
    last = time.monotonic()
    while True:
        try:
            conn, _ = sock.accept()
        except socket.timeout:
            if owner and not alive(owner):
                print(f"ref_server: {owner}, which started it, has exited; exiting", flush=True)
                return
            if idle_exit and time.monotonic() - last > idle_exit:
                print(f"ref_server: idle for {idle_exit} s, exiting", flush=True)
                return
            continue
        last = time.monotonic()
        conn.settimeout(None)
        pid = os.fork()
        if pid == 0:
            sock.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # handle() waits for its child
            code = 0
            try:
                handle(conn)
            except BaseException:
                traceback.print_exc()
                code = 1
            os._exit(code)
        conn.close()


def remove(*paths):
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def pid_path(sock_path):
    return sock_path + ".pid"


def is_server(pid):
    """Whether pid is a ref_server (a stale pid file's pid may be reused)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"ref_server.py" in f.read()
    except OSError:
        return False


def stop(sock_path):
    try:
        with open(pid_path(sock_path)) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        print(f"ref_server: no server recorded for {sock_path}")
        return 0
    if is_server(pid):
        os.kill(pid, signal.SIGTERM)
        print(f"ref_server: stopped {pid}")
    else:
        print(f"ref_server: {pid} had already exited")
    remove(pid_path(sock_path), sock_path)
    return 0


def start(sock_path, idle_exit, log_path):
    stop(sock_path)  # a server left by an interrupted run serves older code
    owner = os.getppid()  # ctest: the server lives as long as it does
    os.makedirs(os.path.dirname(os.path.abspath(sock_path)), exist_ok=True)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid > 0:
        # The caller (ctest) returns once the daemon serves or has failed.
        os.close(ready_w)
        with os.fdopen(ready_r) as ready:
            answer = ready.read().strip()
        if answer != "ready":
            print(f"ref_server: did not start: {answer or 'no answer'}; see {log_path}", file=sys.stderr)
            return 1
        print(f"ref_server: serving {sock_path}")
        return 0
    # The daemon: its own session, no inherited stdio (ctest waits for the
    # test's output pipes to close).
    os.close(ready_r)
    os.setsid()
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(null)
    try:
        t0 = time.monotonic()
        preload()
        print(f"ref_server: preloaded in {time.monotonic() - t0:.1f} s", flush=True)
        remove(sock_path)  # a socket whose server died before writing its pid
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(sock_path)
        sock.listen(64)
        with open(pid_path(sock_path), "w") as f:
            f.write(f"{os.getpid()}\n")
    except BaseException as e:
        traceback.print_exc()
        os.write(ready_w, f"{type(e).__name__}: {e}".encode())
        os._exit(1)
    os.write(ready_w, b"ready")
    os.close(ready_w)
    serve(sock, idle_exit, owner)
    remove(pid_path(sock_path), sock_path)
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["start", "stop"])
    parser.add_argument("--socket", required=True, help="the Unix socket's path")
    parser.add_argument("--idle-exit", type=float, default=None,
                        help="seconds without a request after which the daemon exits (default: it "
                             "exits with the process that started it)")
    parser.add_argument("--log", help="the daemon's log (default: the socket's path + .log)")
    args = parser.parse_args()
    if args.command == "stop":
        return stop(args.socket)
    return start(args.socket, args.idle_exit, args.log or args.socket + ".log")


if __name__ == "__main__":
    sys.exit(main())
