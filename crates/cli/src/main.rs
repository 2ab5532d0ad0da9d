//! `rdmascope`: capture, decode and diagnose RDMA traffic. This crate parses arguments and
//! renders; the engines live in the library crates.

mod analyze;
mod capture;
mod doctor;
mod gen;
mod html;
mod jsonfmt;
mod pin;
mod print;
mod show;
mod sniff;
mod timefmt;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "rdmascope",
    version,
    about = "Capture, decode and diagnose RDMA traffic (InfiniBand, RoCEv1, RoCEv2)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print the packets of capture files, one line each, as a field tree, or as NDJSON.
    Show(show::ShowArgs),
    /// Per-queue-pair transport analysis with plain-language findings.
    Analyze(analyze::AnalyzeArgs),
    /// Check this host's RDMA devices, ports, GIDs, MTU, ECN and counters.
    Doctor(doctor::DoctorArgs),
    /// Write a realistic RDMA traffic scenario as a capture, with its ground truth.
    Gen(gen::GenArgs),
    /// Capture live traffic to pcapng (network interfaces and RDMA devices), reporting drops.
    Capture(capture::CaptureArgs),
    /// Send the frames of a capture onto an interface, paced as recorded or at a set rate.
    Replay(capture::ReplayArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if let Cmd::Doctor(a) = &cli.cmd {
        return match doctor::run(a) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("rdmascope: error: {}", describe(&e));
                std::process::ExitCode::FAILURE
            }
        };
    }
    let r = match cli.cmd {
        Cmd::Doctor(_) => Ok(()),
        Cmd::Show(a) => show::run(&a),
        Cmd::Gen(a) => gen::run(&a),
        Cmd::Analyze(a) => analyze::run(&a),
        Cmd::Capture(a) => capture::run_capture(&a),
        Cmd::Replay(a) => capture::run_replay(&a),
    };
    match r {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            if broken_pipe(&e) {
                return std::process::ExitCode::SUCCESS;
            }
            eprintln!("rdmascope: error: {}", describe(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// Whether the output was closed by its reader (`rdmascope show ... | head`): not an error.
/// The JSON writers return the I/O error inside serde_json's.
fn broken_pipe(e: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == Some(BrokenPipe)
    })
}

/// The error and its causes, as `{:#}` joins them, but without a cause that the message before
/// it already states: the capture crate's errors name their I/O cause in their own message and
/// also return it as their `source`, so it would be printed twice.
fn describe(e: &anyhow::Error) -> String {
    let mut out = String::new();
    let mut before = String::new();
    for cause in e.chain() {
        let msg = cause.to_string();
        if !out.is_empty() && before.contains(&msg) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&msg);
        before = msg;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{broken_pipe, describe};

    /// A closed output ends the program quietly, also when the JSON writer met it.
    #[test]
    fn a_closed_pipe_is_not_an_error() {
        let pipe = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(broken_pipe(&anyhow::Error::new(pipe())));
        assert!(broken_pipe(&anyhow::Error::new(serde_json::Error::io(
            pipe()
        ))));
        assert!(broken_pipe(
            &anyhow::Error::new(pipe()).context("writing the report")
        ));
        let other = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(!broken_pipe(&anyhow::Error::new(serde_json::Error::io(
            other
        ))));
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let own = rdmascope_capture::CaptureError::Io {
            path: "x.pcap".into(),
            source: io(),
        };
        let e = anyhow::Error::new(own).context("analysis stopped after 0 packets");
        assert_eq!(
            describe(&e),
            format!("analysis stopped after 0 packets: x.pcap: {}", io())
        );
        // A cause the message does not state is kept, as `{:#}` keeps it.
        let e = anyhow::Error::new(io()).context("cannot write out.html");
        assert_eq!(describe(&e), format!("{e:#}"));
    }
}
