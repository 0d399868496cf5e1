"""err(f, *args): call f(*args); "OK", or the errno name of the OSError
it raised (E<n> for a number without a name).  For the VM tests' python
parts: sys.path.insert(0, os.environ["SRC"] + "/tests/vm/prog")."""
import errno


def err(f, *args):
    try:
        f(*args)
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, "E%d" % e.errno)
