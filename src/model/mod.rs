//! The result model: everything a result file holds, as typed data. Depends on nothing
//! else in the crate; every other module builds or reads these values.

pub mod error_code;
pub mod kinds;

pub use error_code::{ClientFault, ErrorCode, RetryPolicy};
pub use kinds::*;
