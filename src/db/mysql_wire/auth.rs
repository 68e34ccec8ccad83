//! The password scrambles of the two plugins the lean client speaks.

use sha1::Digest as _;

/// mysql_native_password: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw))).
fn native_scramble(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha1::Sha1::digest(password);
    let h2 = sha1::Sha1::digest(h1);
    let mut h = sha1::Sha1::new();
    h.update(nonce);
    h.update(h2);
    h1.iter().zip(h.finalize()).map(|(a, b)| a ^ b).collect()
}

/// caching_sha2_password: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce).
fn sha2_scramble(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha2::Sha256::digest(password);
    let h2 = sha2::Sha256::digest(h1);
    let mut h = sha2::Sha256::new();
    h.update(h2);
    h.update(nonce);
    h1.iter().zip(h.finalize()).map(|(a, b)| a ^ b).collect()
}

/// The auth response for `plugin`, or None for a plugin this client does not speak
/// (mysql_async takes over; it refuses mysql_clear_password unless allowed).
pub fn scramble(plugin: &str, password: &str, nonce: &[u8]) -> Option<Vec<u8>> {
    match plugin {
        "mysql_native_password" => Some(native_scramble(password.as_bytes(), nonce)),
        "caching_sha2_password" => Some(sha2_scramble(password.as_bytes(), nonce)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_password_scramble_known_vector() {
        // An empty password sends an empty response.
        assert!(native_scramble(b"", b"12345678901234567890").is_empty());
        let s = native_scramble(b"secret", b"01234567890123456789");
        assert_eq!(s.len(), 20);
        // XOR-ing back with SHA1(nonce + SHA1(SHA1(pw))) gives SHA1(pw).
        let h1 = sha1::Sha1::digest(b"secret");
        let h2 = sha1::Sha1::digest(h1);
        let mut h = sha1::Sha1::new();
        h.update(b"01234567890123456789");
        h.update(h2);
        let back: Vec<u8> = s.iter().zip(h.finalize()).map(|(a, b)| a ^ b).collect();
        assert_eq!(back, h1.to_vec());
    }
}
