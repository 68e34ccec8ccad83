//! rustls client configuration for `?tls=require` (encrypt, accept any certificate),
//! `?tls=prefer` (the same when the server offers TLS, as libpq's sslmode=prefer, which does
//! not check the certificate either) and `?tls=verify` (check the chain against `?ca=FILE`
//! or the public web roots).

use super::{TargetUrl, TlsMode};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

/// A TLS configuration that cannot be built: the CA file given, or the library's setup.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("TLS setup failed: {0}")]
    Setup(rustls::Error),
    #[error("cannot read CA file {}: {source}", .path.display())]
    CaUnreadable { path: PathBuf, source: std::io::Error },
    #[error("CA file {}: {source}", .path.display())]
    CaNotPem { path: PathBuf, source: std::io::Error },
    #[error("CA file {}: {source}", .path.display())]
    CaRejected { path: PathBuf, source: rustls::Error },
    #[error("CA file {} holds no PEM certificate", .0.display())]
    NoCertificate(PathBuf),
}

/// Builds the client config, or `None` when TLS is off.
pub fn client_config(target: &TargetUrl) -> Result<Option<ClientConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Setup)?;
    let config = match target.tls {
        TlsMode::Off => return Ok(None),
        TlsMode::Prefer | TlsMode::Require => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth(),
        TlsMode::Verify => builder.with_root_certificates(root_store(target)?).with_no_client_auth(),
    };
    Ok(Some(config))
}

fn root_store(target: &TargetUrl) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    match &target.ca_file {
        Some(path) => {
            let file =
                std::fs::File::open(path).map_err(|source| TlsError::CaUnreadable { path: path.clone(), source })?;
            for cert in rustls_pemfile::certs(&mut std::io::BufReader::new(file)) {
                let cert = cert.map_err(|source| TlsError::CaNotPem { path: path.clone(), source })?;
                roots.add(cert).map_err(|source| TlsError::CaRejected { path: path.clone(), source })?;
            }
            if roots.is_empty() {
                return Err(TlsError::NoCertificate(path.clone()));
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
