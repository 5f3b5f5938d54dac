//! `serve`'s options and their checks: where to listen, the access token, and the limits on
//! what the page may ask for. The server itself is [`crate::serve`].

use std::net::IpAddr;

use anyhow::{Result, bail};
use clap::Args;
use simulations::BackendChoice;

/// The shortest token accepted from `--token`: a guessable token is no protection.
pub const MIN_TOKEN_LEN: usize = 16;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on. Anything but a loopback address (127.0.0.0/8, ::1) needs a
    /// token: without --token one is generated and printed.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Port to listen on (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8080, allow_hyphen_values = true)]
    pub port: u16,
    /// Access token required on every request and WebSocket (at least 16 characters:
    /// letters, digits, '-' and '_').
    #[arg(long)]
    pub token: Option<String>,
    /// Where the simulations run.
    #[arg(long, value_parser = super::choice::choice::<BackendChoice>(), default_value_t)]
    pub backend: BackendChoice,
    /// Most WebSocket connections (browser tabs) at once, all clients together.
    #[arg(long, default_value_t = 8, allow_hyphen_values = true)]
    pub max_clients: u32,
    /// Most WebSocket connections (each one a simulation) from one client address.
    #[arg(long, default_value_t = 2, allow_hyphen_values = true)]
    pub max_sessions_per_client: u32,
    /// Largest grid a page may ask for, in cells (heat: nx·ny·nz); default 4096² on a GPU,
    /// 512² on the CPU.
    #[arg(long, allow_hyphen_values = true)]
    pub max_cells: Option<u64>,
    /// Most Physarum agents a page may ask for; default 16Mi on a GPU, 256Ki on the CPU.
    #[arg(long, allow_hyphen_values = true)]
    pub max_agents: Option<u32>,
    /// Seconds a connection may stay silent (no message, no answer to the server's pings) or
    /// leave a frame unread before it is closed and its simulation freed.
    #[arg(long, default_value_t = 30, allow_hyphen_values = true)]
    pub idle_timeout: u32,
}

/// The checked options.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub bind: IpAddr,
    pub port: u16,
    /// `None` only on a loopback address without --token.
    pub token: Option<String>,
    /// Whether the token was generated here (and so is printed).
    pub generated: bool,
    pub backend: BackendChoice,
    pub max_clients: u32,
    pub max_sessions_per_client: u32,
    pub max_cells: Option<u64>,
    pub max_agents: Option<u32>,
    pub idle_timeout: std::time::Duration,
}

impl ServeArgs {
    /// Checks the options; generates a token for a non-loopback address given none.
    pub fn check(self) -> Result<ServeOptions> {
        for (option, value) in
            [("--max-clients", self.max_clients), ("--max-sessions-per-client", self.max_sessions_per_client)]
        {
            if !(1..=1024).contains(&value) {
                bail!("{option} must be between 1 and 1024, got {value}");
            }
        }
        if !(1..=3600).contains(&self.idle_timeout) {
            bail!("--idle-timeout must be between 1 and 3600 seconds, got {}", self.idle_timeout);
        }
        if self.max_cells == Some(0) {
            bail!("--max-cells must be at least 1");
        }
        if self.max_agents == Some(0) {
            bail!("--max-agents must be at least 1");
        }
        if let Some(token) = &self.token {
            check_token(token)?;
        }
        let (token, generated) = match self.token {
            Some(token) => (Some(token), false),
            None if self.bind.is_loopback() => (None, false),
            None => (Some(generate_token()?), true),
        };
        Ok(ServeOptions {
            bind: self.bind,
            port: self.port,
            token,
            generated,
            backend: self.backend,
            max_clients: self.max_clients,
            max_sessions_per_client: self.max_sessions_per_client,
            max_cells: self.max_cells,
            max_agents: self.max_agents,
            idle_timeout: std::time::Duration::from_secs(u64::from(self.idle_timeout)),
        })
    }
}

/// Refuses a short token, or one with characters that would need escaping in a URL.
pub fn check_token(token: &str) -> Result<()> {
    if token.len() < MIN_TOKEN_LEN {
        bail!("--token must be at least {MIN_TOKEN_LEN} characters long, got {}", token.len());
    }
    if !token.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        bail!("--token may hold only letters, digits, '-' and '_'");
    }
    Ok(())
}

/// 128 random bits from the operating system, as 32 hexadecimal digits.
pub fn generate_token() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("cannot generate an access token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(bind: &str, token: Option<&str>) -> ServeArgs {
        ServeArgs {
            bind: bind.parse().unwrap(),
            port: 0,
            token: token.map(str::to_owned),
            backend: BackendChoice::Cpu,
            max_clients: 8,
            max_sessions_per_client: 2,
            max_cells: None,
            max_agents: None,
            idle_timeout: 30,
        }
    }

    #[test]
    fn a_public_address_always_has_a_token() {
        for bind in ["0.0.0.0", "::", "192.168.1.5"] {
            let options = args(bind, None).check().unwrap();
            let token = options.token.expect("a token");
            assert!(options.generated && token.len() == 32, "{bind}: {token}");
        }
        let loopback = args("127.0.0.1", None).check().unwrap();
        assert!(loopback.token.is_none());
        let given = args("0.0.0.0", Some("abcdefghijklmnop")).check().unwrap();
        assert_eq!(given.token.as_deref(), Some("abcdefghijklmnop"));
        assert!(!given.generated);
        assert_ne!(generate_token().unwrap(), generate_token().unwrap());
    }

    #[test]
    fn weak_tokens_are_refused() {
        assert!(args("0.0.0.0", Some("short")).check().is_err());
        assert!(args("127.0.0.1", Some("spaces are not allowed")).check().is_err());
        assert!(args("127.0.0.1", Some("0123456789abcdef&x=1")).check().is_err());
    }
}
