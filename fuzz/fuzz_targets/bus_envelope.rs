//! The bus wire parsers: `pqkit_bus::envelope::parse`, `PublicIdentity::decode` and the responder side of
//! the handshake (`handshake::respond`) on arbitrary bytes. Properties: never a panic; a parsed envelope's
//! header re-serialises (envelope::Header::write) to exactly the bytes it was parsed from and re-parses to the
//! same Meta; a decoded identity re-encodes to the bytes it consumed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqkit_bus::envelope::{self, Header};
use pqkit_bus::{Identity, PublicIdentity, handshake};
use std::sync::OnceLock;

fn broker() -> &'static Identity {
    static ID: OnceLock<Identity> = OnceLock::new();
    ID.get_or_init(|| Identity::from_seed("broker", &[1u8; 32]).expect("identity"))
}

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = envelope::parse(data) {
        let h = Header {
            kind: m.kind,
            priority: m.priority,
            epoch: m.epoch,
            seq: m.seq,
            sender: m.sender,
            sub: m.sub,
            topic: std::str::from_utf8(&data[m.topic.clone()]).expect("topic was checked as UTF-8"),
            reply: std::str::from_utf8(&data[m.reply.clone()]).expect("reply was checked as UTF-8"),
        };
        assert_eq!(h.len(), m.aad_len());
        let mut out = Vec::new();
        h.append(&mut out);
        assert_eq!(out, &data[..m.aad_len()], "header serialize(parse(b)) differs from b");
        out.extend_from_slice(&data[m.aad_len()..]);
        assert_eq!(envelope::parse(&out).expect("re-parse"), m, "parse(serialize(parse(b))) differs");
    }
    if let Ok((id, used)) = PublicIdentity::decode(data) {
        let mut out = Vec::new();
        id.encode(&mut out);
        assert_eq!(out, &data[..used], "identity encode(decode(b)) differs");
    }
    let _ = handshake::respond(broker(), data);
});
