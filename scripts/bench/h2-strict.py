"""
HTTP/2 strictness probe (issue 29 design spike): one connection per case, a request that RFC 9113 (8.1.1, 8.2.1,
8.2.2, 8.3, 8.3.1) calls malformed, sent with Debian's python3-h2 (outbound checks off), and what the server did:
a status (it answered, so the request reached its handler), RST_STREAM <code>, GOAWAY <code>, or nothing.

    /usr/bin/python3 scripts/bench/h2-strict.py PORT     (TLS on 127.0.0.1:PORT, ALPN h2, certificate not checked)
"""
import socket, ssl, sys
import h2.connection, h2.config, h2.events
port=int(sys.argv[1])
def run(name, headers, data=None, end=True):
    ctx=ssl.create_default_context(); ctx.check_hostname=False; ctx.verify_mode=ssl.CERT_NONE; ctx.set_alpn_protocols(["h2"])
    s=ctx.wrap_socket(socket.create_connection(("127.0.0.1",port)), server_hostname="h2.test"); s.settimeout(3)
    c=h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, validate_outbound_headers=False, normalize_outbound_headers=False, validate_inbound_headers=False))
    c.initiate_connection(); s.sendall(c.data_to_send())
    c.send_headers(1, headers, end_stream=(data is None and end))
    if data is not None: c.send_data(1, data, end_stream=True)
    s.sendall(c.data_to_send())
    out="no answer"
    try:
        while True:
            b=s.recv(65536)
            if not b: out=out if out!="no answer" else "closed"; break
            for e in c.receive_data(b):
                if isinstance(e, h2.events.ResponseReceived): out="status "+dict(e.headers).get(b":status",b"?").decode()
                elif isinstance(e, h2.events.StreamReset): out="RST_STREAM %s"%e.error_code
                elif isinstance(e, h2.events.ConnectionTerminated): out=(out if out.startswith("status") else "GOAWAY %s"%e.error_code)
            s.sendall(c.data_to_send())
            if out!="no answer": break
    except Exception as ex: out = out if out!="no answer" else "error "+type(ex).__name__
    print(f"{name:40s} {out}")
base=[(":method","GET"),(":scheme","https"),(":authority","h2.test"),(":path","/")]
run("ok", base)
run("uppercase name", base+[("X-Upper","1")])
run("connection header", base+[("connection","keep-alive")])
run("te gzip", base+[("te","gzip")])
run("te trailers", base+[("te","trailers")])
run("transfer-encoding", base+[("transfer-encoding","chunked")])
run("colon in name", base+[("x:y","1")])
run("CR in value", base+[("x-a","a\rb")])
run("pseudo after regular", base[:3]+[("x-a","1"),(":path","/")])
run("duplicate :path", base+[(":path","/x")])
run("missing :path", base[:3])
run("empty :path", base[:3]+[(":path","")])
run("path without slash", base[:3]+[(":path","abc")])
run("unknown pseudo", base+[(":foo","1")])
run("content-length mismatch", [(":method","POST"),(":scheme","https"),(":authority","h2.test"),(":path","/"),("content-length","5")], data=b"abc")
run("host and authority differ", base+[("host","other.test")])
