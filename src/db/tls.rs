//! rustls client configuration for `?tls=require` (encrypt, accept any certificate) and
//! `?tls=verify` (check the chain against `?ca=FILE` or the public web roots).

use super::{TargetUrl, TlsMode};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;

/// Builds the client config, or `None` when TLS is off.
pub fn client_config(target: &TargetUrl) -> Result<Option<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?;
    let config = match target.tls {
        TlsMode::Off => return Ok(None),
        TlsMode::Require => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth(),
        TlsMode::Verify => builder.with_root_certificates(root_store(target)?).with_no_client_auth(),
    };
    Ok(Some(config))
}

fn root_store(target: &TargetUrl) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    match &target.ca_file {
        Some(path) => {
            let file = std::fs::File::open(path).map_err(|e| format!("cannot read CA file {}: {e}", path.display()))?;
            for cert in rustls_pemfile::certs(&mut std::io::BufReader::new(file)) {
                let cert = cert.map_err(|e| format!("CA file {}: {e}", path.display()))?;
                roots.add(cert).map_err(|e| format!("CA file {}: {e}", path.display()))?;
            }
            if roots.is_empty() {
                return Err(format!("CA file {} holds no PEM certificate", path.display()));
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    Ok(roots)
}

/// `tls=require`: the link is encrypted but the server is not authenticated.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
