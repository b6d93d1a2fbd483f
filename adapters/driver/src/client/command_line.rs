//! [`IntoStdioCommand`]: what names a stdio server to start, including a command line split
//! into words.

#[cfg(unix)]
use crate::process::StdioCommand;

/// Something that names a stdio server to start: a [`StdioCommand`], or a command line
/// (`"npx -y @modelcontextprotocol/server-everything"`) split into words, with `'...'` and
/// `"..."` quoting and `\` escapes; no other shell syntax.
#[cfg(unix)]
pub trait IntoStdioCommand {
    /// The command to run.
    ///
    /// # Errors
    ///
    /// A command line that is empty or has an unterminated quote.
    fn into_stdio_command(self) -> Result<StdioCommand, String>;
}

#[cfg(unix)]
impl IntoStdioCommand for StdioCommand {
    fn into_stdio_command(self) -> Result<StdioCommand, String> {
        Ok(self)
    }
}

#[cfg(unix)]
impl IntoStdioCommand for &str {
    fn into_stdio_command(self) -> Result<StdioCommand, String> {
        let mut words = split_command_line(self)?.into_iter();
        let program = words.next().ok_or("empty command line")?;
        Ok(StdioCommand::new(program).args(words))
    }
}

#[cfg(unix)]
impl IntoStdioCommand for String {
    fn into_stdio_command(self) -> Result<StdioCommand, String> {
        self.as_str().into_stdio_command()
    }
}

/// Splits a command line into words: whitespace separates, quotes group, `\` escapes.
fn split_command_line(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated ' quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c) => word.push(c),
                            None => return Err("unterminated \" quote".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated \" quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    word.push(c);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split_command_line;

    #[test]
    fn splits_words_quotes_and_escapes() {
        assert_eq!(
            split_command_line(r#"npx -y  "a b" 'c "d"' e\ f """#).unwrap(),
            ["npx", "-y", "a b", "c \"d\"", "e f", ""]
        );
        assert!(split_command_line("a 'b").is_err());
        assert!(split_command_line("").unwrap().is_empty());
    }
}
