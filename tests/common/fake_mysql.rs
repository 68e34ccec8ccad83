//! The MySQL wire protocol's first packets, for fake servers over real TCP (tests/hostile_server.rs,
//! tests/flavours.rs): included with `#[path]` by the tests that need it.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;

/// 4.1 protocol, secure connection, plugin auth, no EOF packets.
pub const CAPS: u32 = 0x200 | 0x8000 | 0x80000 | 0x0100_0000;
/// The largest payload of one packet.
pub const FRAME: usize = 0xff_ffff;
/// OK, as the reply to a command (sequence 1) or to the handshake (sequence 2).
pub const OK: [u8; 7] = [0, 0, 0, 2, 0, 0, 0];

pub fn pkt(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    p.push(seq);
    p.extend_from_slice(payload);
    p
}

/// The server's handshake, announcing `version`.
pub fn greeting(version: &str) -> Vec<u8> {
    let mut g = vec![10];
    g.extend_from_slice(version.as_bytes());
    g.push(0);
    g.extend_from_slice(&[7, 0, 0, 0]);
    g.extend_from_slice(b"abcdefgh\0");
    g.extend_from_slice(&(CAPS as u16).to_le_bytes());
    g.push(45);
    g.extend_from_slice(&2u16.to_le_bytes());
    g.extend_from_slice(&((CAPS >> 16) as u16).to_le_bytes());
    g.push(21);
    g.extend_from_slice(&[0; 10]);
    g.extend_from_slice(b"ijklmnopqrst\0");
    g.extend_from_slice(b"mysql_native_password\0");
    pkt(0, &g)
}

/// Reads one client packet; None when the client is gone.
pub fn read_packet(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let mut p = vec![0; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
    s.read_exact(&mut p).ok()?;
    Some(p)
}

/// Greeting (as `version`), the client's response, OK: the client is in.
pub fn welcome(s: &mut TcpStream, version: &str) -> Option<()> {
    s.write_all(&greeting(version)).ok()?;
    read_packet(s)?;
    s.write_all(&pkt(2, &OK)).ok()
}
