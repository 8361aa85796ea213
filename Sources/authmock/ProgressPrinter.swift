import AuthmockScenario
import Foundation
import Synchronization

/// What `authmock run` prints while cases finish. A case that did not pass
/// gets its line at once; a PASS only with --verbose (the summary counts
/// them). On a terminal a progress line (`[137/232] 12 FAIL`) is redrawn
/// below them, and verdicts are coloured unless NO_COLOR is set; into a pipe
/// or a file the same lines come one by one, without redraws or colour.
final class ProgressPrinter: Sendable {
    private struct State {
        var done = 0
        var failed = 0
        var errors = 0
    }
    private let state = Mutex(State())
    private let total: Int
    private let verbose: Bool
    private let showSkips: Bool
    let terminal: Bool
    let colour: Bool

    init(total: Int, verbose: Bool, showSkips: Bool) {
        self.total = total
        self.verbose = verbose
        self.showSkips = showSkips
        terminal = isatty(STDOUT_FILENO) != 0
        colour = terminal && ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) != false
    }

    func finished(_ result: CaseResult) {
        state.withLock { state in
            state.done += 1
            if result.verdict == .fail { state.failed += 1 }
            if result.verdict == .error { state.errors += 1 }
            let shown = result.verdict == .pass ? verbose : showSkips || Reports.shownByDefault(result)
            var text = ""
            if shown {
                text = Reports.progressLine(result, colour: colour)
                if verbose {
                    for finding in result.findings {
                        text += "\n           \(finding.passed ? "ok" : "x ") \(finding.expectation): \(finding.message)"
                    }
                }
            }
            if terminal {
                // Clear the progress line, print what is new, draw it again.
                var line = "\r\u{1B}[K" + (text.isEmpty ? "" : text + "\n")
                if state.done < total { line += "[\(state.done)/\(total)] \(state.failed) FAIL\(state.errors > 0 ? ", \(state.errors) ERROR" : "")" }
                FileHandle.standardOutput.write(Data(line.utf8))
            } else if !text.isEmpty {
                printNow(text)
            }
        }
    }
}
