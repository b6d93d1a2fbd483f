//! A browser stand-in for OAuth logins (`$MCP_BROWSER`).

/// A bash script (pure bash, `/dev/tcp`) that GETs the authorization URL it is given (the
/// test server approves at once) and then that answer's `Location`, the loopback callback.
/// With `$BROWSER_LOG` set, each run first appends a line `visit` to that file.
pub const BROWSER: &str = r#"
get() {
  local rest="${1#http://}"; local hostport="${rest%%/*}"; local path="/${rest#*/}"
  exec 3<>"/dev/tcp/${hostport%%:*}/${hostport##*:}"
  printf 'GET %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$path" "$hostport" >&3
  local line
  while IFS= read -r line <&3; do
    line="${line%$'\r'}"
    [ -z "$line" ] && break
    case "$line" in [Ll]ocation:*) LOCATION="${line#*: }";; esac
  done
  exec 3<&-
}
if [ -n "$BROWSER_LOG" ]; then echo "visit" >> "$BROWSER_LOG"; fi
get "$1"
get "$LOCATION"
"#;
