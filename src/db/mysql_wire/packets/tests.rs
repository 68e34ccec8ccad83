use super::*;
use proptest::prelude::*;

#[test]
fn lenenc_round_trip() {
    for v in [0u64, 250, 251, 65_535, 65_536, 16_777_215, 16_777_216, u64::MAX / 3] {
        let mut out = Vec::new();
        put_lenenc(&mut out, v);
        let mut r = Reader::new(&out);
        assert_eq!(r.lenenc("x"), Ok(Some(v)));
        assert!(r.rest().is_empty());
    }
}

#[test]
fn lenenc_cut_short_is_malformed() {
    for bytes in [&[0xfc, 1][..], &[0xfd, 1, 2], &[0xfe, 1, 2, 3, 4, 5, 6, 7], &[0xff], &[]] {
        assert!(Reader::new(bytes).lenenc("x").is_err(), "{bytes:?}");
    }
    // A string claiming more bytes than the packet holds.
    assert!(Reader::new(&[0xfe, 0, 0, 0, 0, 0, 0, 0, 0x80]).lenenc_bytes("x").is_err());
}

fn mariadb_greeting() -> Vec<u8> {
    let mut g = vec![10];
    g.extend_from_slice(b"10.11.6-MariaDB\0");
    g.extend_from_slice(&[1, 0, 0, 0]);
    g.extend_from_slice(b"abcdefgh\0");
    g.extend_from_slice(&0xf7feu16.to_le_bytes());
    g.push(45);
    g.extend_from_slice(&2u16.to_le_bytes());
    g.extend_from_slice(&0x81bfu16.to_le_bytes());
    g.push(21);
    g.extend_from_slice(&[0; 10]);
    g.extend_from_slice(b"ijklmnopqrst\0");
    g.extend_from_slice(b"mysql_native_password\0");
    g
}

#[test]
fn greeting_parses_and_every_truncation_is_an_error() {
    let g = mariadb_greeting();
    let parsed = Greeting::parse(&g).unwrap();
    assert_eq!(parsed.server_version, "10.11.6-MariaDB");
    assert_eq!(parsed.nonce, b"abcdefghijklmnopqrst");
    assert_eq!(parsed.plugin, "mysql_native_password");
    // Cut anywhere before the plugin name: an error or a parse, never a panic.
    for cut in 0..g.len() {
        let _ = Greeting::parse(&g[..cut]);
    }
    assert!(Greeting::parse(&g[..20]).is_err());
    let mut v9 = g.clone();
    v9[0] = 9;
    assert!(Greeting::parse(&v9).unwrap_err().0.contains("protocol version 9"));
}

#[test]
fn column_counts_are_capped() {
    assert_eq!(result_header(&[3], 4096, false), Ok((3, true)));
    assert!(result_header(&[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], 4096, false).is_err());
    assert!(result_header(&[0xfc, 0x01, 0x10], 4096, false).is_err()); // 4097
    assert!(result_header(&[0xfb], 4096, false).is_err());
    // MARIADB_CLIENT_CACHE_METADATA: a flag byte says whether the definitions follow.
    assert_eq!(result_header(&[3, 0], 4096, true), Ok((3, false)));
    assert_eq!(result_header(&[3, 1], 4096, true), Ok((3, true)));
    assert!(result_header(&[3], 4096, true).is_err());
}

#[test]
fn rows_must_match_their_columns() {
    assert_eq!(text_row(&[1, b'a', 0xfb], 2), Ok(vec![Some("a".into()), None]));
    assert!(text_row(&[1, b'a'], 2).is_err());
    assert!(text_row(&[1, b'a', 0xfb, 0], 2).is_err());
    assert!(text_row(&[0xfd, 0xff, 0xff, 0xff], 1).is_err());
}

#[test]
fn binary_rows_decode_every_type() {
    let t = |kind: u8| ColumnFormat { charset: 45, kind, flags: 0 };
    let types = [t(0x08), t(0x03), t(0x05), t(0xfd), t(0xf6), t(0x0c), t(0x08)];
    let mut p = vec![0x00, 0b0000_0000, 0b0000_0001]; // column 6 (bit 8) is NULL
    p.extend_from_slice(&(-5i64).to_le_bytes());
    p.extend_from_slice(&7i32.to_le_bytes());
    p.extend_from_slice(&2.5f64.to_le_bytes());
    p.extend_from_slice(b"\x03abc");
    p.extend_from_slice(b"\x0412.5");
    p.extend_from_slice(&[7, 0xea, 0x07, 11, 23, 8, 30, 5]);
    let row = binary_row(&p, &types).unwrap();
    assert_eq!(
        row,
        vec![
            Value::Int(-5),
            Value::Int(7),
            Value::Float(2.5),
            Value::Text("abc".into()),
            Value::Text("12.5".into()),
            Value::Text("2026-11-23 08:30:05".into()),
            Value::Null
        ]
    );
    assert!(binary_row(&p[..p.len() - 1], &types).is_err());
    assert_eq!(
        OkInfo::parse(0, &[0, 3, 0xfc, 0x10, 0x27, 2, 0, 0, 0]),
        Ok(OkInfo { affected_rows: 3, last_insert_id: 10_000, more: false })
    );
}

#[test]
fn text_rows_decode_like_binary_rows() {
    let t = |kind: u8, charset: u16, flags: u16| ColumnFormat { charset, kind, flags };
    let types = [
        t(0x08, 63, 0),
        t(0x03, 63, 0),
        t(0x05, 63, 0),
        t(0x04, 63, 0),
        t(0xfd, 45, 0),
        t(0xfc, 63, 0),
        t(0xf6, 63, 0),
        t(0x0c, 63, 0),
        t(0x08, 63, UNSIGNED_FLAG),
        t(0x03, 63, 0),
    ];
    let mut p = Vec::new();
    for v in ["-1099511627776", "7", "2.5", "0.1", "h\u{e9}'\\", "\0\x01\u{ff}", "12.50", "2026-11-23 08:30:05"] {
        put_lenenc(&mut p, v.len() as u64);
        p.extend_from_slice(v.as_bytes());
    }
    p.extend_from_slice(b"\x1418446744073709551615");
    p.push(0xfb);
    assert_eq!(
        text_values(&p, &types).unwrap(),
        vec![
            Value::Int(-(1 << 40)),
            Value::Int(7),
            Value::Float(2.5),
            Value::Float(0.1f32 as f64),
            Value::Text("h\u{e9}'\\".into()),
            Value::Bytes("\0\x01\u{ff}".as_bytes().to_vec()),
            Value::Text("12.50".into()),
            Value::Text("2026-11-23 08:30:05".into()),
            Value::Text("18446744073709551615".into()),
            Value::Null,
        ]
    );
    assert!(text_values(&p[..p.len() - 1], &types).is_err());
    assert!(text_values(&[p.clone(), vec![0]].concat(), &types).is_err());
    let bad = [3, b'1', b'x', b'2'];
    assert!(text_values(&bad, &[t(0x03, 63, 0)]).unwrap_err().0.contains("not an integer"));
    assert!(text_values(&bad, &[t(0x05, 63, 0)]).is_err());
}

#[test]
fn auth_replies() {
    assert_eq!(AuthReply::parse(&[0]), Ok(AuthReply::Ok));
    assert_eq!(AuthReply::parse(&[1, 3]), Ok(AuthReply::FastAuthOk));
    assert_eq!(
        AuthReply::parse(b"\xfemysql_native_password\0abc\0"),
        Ok(AuthReply::Switch { plugin: "mysql_native_password".into(), nonce: b"abc".to_vec() })
    );
    assert!(AuthReply::parse(b"\xfeno-nul").is_err());
    assert!(AuthReply::parse(&[]).is_err());
    assert!(AuthReply::parse(&[7]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: super::super::fuzz_cases(4000), failure_persistence: None, ..ProptestConfig::default() })]

    /// Arbitrary bytes into every parser: errors, never a panic or a huge allocation.
    #[test]
    fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), n in 0usize..10_000) {
        let _ = Greeting::parse(&bytes);
        let _ = more_results(0, &bytes);
        let _ = more_results(CLIENT_DEPRECATE_EOF, &bytes);
        let _ = ColumnFormat::parse(&bytes);
        let types: Vec<ColumnFormat> = bytes.iter().take(n % 12).map(|&b| ColumnFormat { charset: 33, kind: b, flags: 0 }).collect();
        let _ = binary_row(&bytes, &types);
        let _ = text_values(&bytes, &types);
        let _ = result_header(&bytes, 4096, true);
        let _ = PrepareOk::parse(&bytes, 4096);
        let _ = text_row(&bytes, n);
        let _ = AuthReply::parse(&bytes);
        let _ = err_packet(&bytes);
        let mut r = Reader::new(&bytes);
        while let Ok(Some(_)) = r.lenenc_bytes("x") {}
    }

    /// A valid greeting with any one byte changed still parses or fails cleanly.
    #[test]
    fn mutated_greetings_never_panic(at in 0usize..80, byte in any::<u8>(), cut in 0usize..90) {
        let mut g = mariadb_greeting();
        let at = at % g.len();
        g[at] = byte;
        g.truncate(cut.min(g.len()));
        let _ = Greeting::parse(&g);
    }
}
