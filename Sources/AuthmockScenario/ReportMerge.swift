import AuthmockServer
import Foundation

/// `authmock report merge`: shard reports (the JSON of `authmock run
/// --json`) read back and combined into the report of one run per driver.
public enum ReportMerge {
    /// One JSON report as read back: the fields a merge needs.
    public struct Report: Decodable, Sendable {
        public struct Suite: Decodable, Sendable {
            public var version: String
            public var builtIn: String?
        }
        public var reportVersion: Int
        public var suite: Suite
        public var driver: String
        public var driverName: String?
        public var driverVersion: String?
        public var seconds: Double
        public var cases: [CaseResult]
    }

    /// The merged run of one driver.
    public struct Run: Sendable {
        public var driver: String
        public var driverName: String?
        public var builtIn: String?
        /// The slowest shard's time: the shards ran side by side.
        public var seconds: Double
        public var cases: [CaseResult]
    }

    public struct Problem: Error, CustomStringConvertible {
        public var description: String
    }

    public static func read(_ path: String) throws -> Report {
        guard let data = FileManager.default.contents(atPath: path) else { throw Problem(description: "\(path): cannot read the file") }
        let report: Report
        do {
            report = try JSONDecoder().decode(Report.self, from: data)
        } catch {
            throw Problem(description: "\(path): not an authmock JSON report (authmock run --json): \(error)")
        }
        guard report.reportVersion == Reports.reportVersion else {
            throw Problem(description: "\(path): report version \(report.reportVersion), this authmock reads version \(Reports.reportVersion)")
        }
        return report
    }

    /// Groups the reports by driver and merges each group; a case run in two
    /// reports of one driver, or shards of different suites, is an error.
    public static func merge(_ reports: [(path: String, report: Report)]) throws -> [Run] {
        var runs: [Run] = []
        var origin: [String: String] = [:]
        for (path, report) in reports {
            let key = report.driverName ?? report.driver
            if let index = runs.firstIndex(where: { ($0.driverName ?? $0.driver) == key }) {
                guard runs[index].builtIn == report.suite.builtIn else {
                    throw Problem(
                        description:
                            "\(path): built-in suite \(report.suite.builtIn ?? "none"), other shards of \(key) ran \(runs[index].builtIn ?? "none")")
                }
                runs[index].cases += report.cases
                runs[index].seconds = max(runs[index].seconds, report.seconds)
            } else {
                runs.append(
                    Run(
                        driver: report.driver, driverName: report.driverName, builtIn: report.suite.builtIn, seconds: report.seconds,
                        cases: report.cases))
            }
            for result in report.cases {
                let run = "\(key) \(result.label)"
                if let first = origin[run] {
                    throw Problem(description: "\(path): case run \(result.label) of \(key) is also in \(first): give each shard once")
                }
                origin[run] = path
            }
        }
        return runs.map { run in
            var run = run
            run.cases.sort(by: suiteOrder)
            return run
        }
    }

    /// Case ids compared number by number (1.10 after 1.9), then the dialect.
    static func suiteOrder(_ a: CaseResult, _ b: CaseResult) -> Bool {
        let x = a.id.split(separator: ".").map { Int($0) ?? 0 }, y = b.id.split(separator: ".").map { Int($0) ?? 0 }
        if x != y { return x.lexicographicallyPrecedes(y) }
        if a.id != b.id { return a.id < b.id }
        let profiles = Dialects.names
        return (profiles.firstIndex(of: a.profile) ?? profiles.count, a.profile) < (profiles.firstIndex(of: b.profile) ?? profiles.count, b.profile)
    }
}
