"""moto's S3 server with a key's write and its reads atomic to each other, as on a real server.

moto (5.2.1) makes a PUT's object visible before it sets the object's user metadata, so a HEAD in between sees an object
that carries no geodrive-site: another tool's, to the engine, which keeps it as a change made elsewhere (ADR 0041). No real
server shows an object without the metadata it was written with. Every key write (PUT, copy, multipart completion), read
(GET, HEAD) and delete takes one lock here; moto serves under the GIL anyway. Arguments are moto.server's.
"""
import functools
import sys
import threading

from moto.s3.responses import S3Response
from moto.server import main

_lock = threading.RLock()


def _atomic(handler):
    @functools.wraps(handler)
    def locked(*args, **kwargs):
        with _lock:
            return handler(*args, **kwargs)

    return locked


for name in ("_key_response_put", "_key_response_post", "_key_response_delete", "head_object", "get_object"):
    if hasattr(S3Response, name):
        setattr(S3Response, name, _atomic(getattr(S3Response, name)))
    else:
        # Another moto than the one this was written against: served as moto serves it.
        print(f"moto_server.py: this moto has no S3Response.{name}; not made atomic", file=sys.stderr)

if __name__ == "__main__":
    main(sys.argv[1:])
