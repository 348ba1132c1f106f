//! The store on Cloudflare D1 (Worker only). Written with the Worker target.
