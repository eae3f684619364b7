//! placeholder
use proc_macro::TokenStream;
#[proc_macro_derive(Topic, attributes(topic, key, id))]
pub fn derive_topic(_i: TokenStream) -> TokenStream { TokenStream::new() }
#[proc_macro_derive(CdrType, attributes(topic, cdr, key, id))]
pub fn derive_cdr_type(_i: TokenStream) -> TokenStream { TokenStream::new() }
