import ArgumentParser
import AuthmockScenario
import Foundation

/// `authmock report merge`: the shard reports of a sharded run combined.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Work with JSON reports of `authmock run`.", subcommands: [Merge.self])

    struct Merge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Combine the JSON reports of `authmock run --shard K/N` into one report per driver.",
            discussion: """
                Give every shard's report once. Prints the merged verdict counts and exits as `authmock run` would have: \
                0 when nothing FAILed or ERRORed, 1 otherwise, 2 for unreadable or overlapping reports. With reports of \
                several drivers, --json and --junit need one driver; --markdown writes the compatibility matrix with a \
                column per driver, and so does --html for several drivers (for one, it writes the run's report, as \
                `authmock run --html` does).
                """)

        @Argument(help: "JSON reports written by `authmock run --json`.") var reports: [String]
        @Option(help: "Write the merged JSON report here (one driver).") var json: String?
        @Option(help: "Write the merged JUnit XML report here (one driver).") var junit: String?
        @Option(help: "Write the compatibility matrix as Markdown here.") var markdown: String?
        @Option(help: "One driver: the run's HTML report (as `authmock run --html`); several: the compatibility matrix as HTML.")
        var html: String?

        func run() async throws {
            guard !reports.isEmpty else { throw ValidationError("give the JSON reports to merge") }
            let runs: [ReportMerge.Run]
            do {
                runs = try ReportMerge.merge(try reports.map { ($0, try ReportMerge.read($0)) })
            } catch {
                FileHandle.standardError.write(Data("authmock report merge: \(error)\n".utf8))
                throw ExitCode(RunExit.usage)
            }
            if runs.count > 1, json != nil || junit != nil {
                FileHandle.standardError.write(
                    Data("authmock report merge: --json and --junit merge one driver's shards; these reports come from \(runs.count) drivers\n".utf8))
                throw ExitCode(RunExit.usage)
            }
            try ReportFiles(junit: junit, json: json, html: html).makeFolders()
            let columns = runs.map { CompatibilityReport.Column(name: $0.driverName ?? $0.driver, results: $0.cases) }
            try CompatibilityReport.write(columns, markdown: markdown, html: runs.count > 1 ? html : nil)
            // --json and --junit are there only with one driver (checked above).
            var failed = false
            for run in runs {
                print("\(run.driverName ?? run.driver): \(run.cases.count) case runs")
                do {
                    try finishRun(
                        run.cases, seconds: run.seconds, driver: run.driver, suite: run.builtIn,
                        reports: ReportFiles(junit: junit, json: json, html: runs.count == 1 ? html : nil))
                } catch let exit as ExitCode where exit.rawValue == RunExit.failures {
                    failed = true
                }
            }
            if failed { throw ExitCode(RunExit.failures) }
        }
    }
}
