import AuthmockScenario
import AuthmockTransports
import Foundation
import Testing

/// Verdicts judge refresh logic, not transport: the reference client gives
/// the same verdict for every case with a pool of 6 connections per host
/// (URLSession's default) and with an unlimited one, refreshing by its own
/// clock ahead of expiry, at expiry, or never. The allowed differences are
/// the should findings about refreshing by the client's own clock: 6.1
/// (ahead of expiry) and 11.2 (renewing a token known to be expired before
/// sending), which a client that never refreshes by its clock misses. Run
/// 16 case runs at once on two cores: verdicts hold at any concurrency.
/// An interpreter-run driver gives the same verdicts at 64 case runs at
/// once (`authmock run`'s default on two cores) as at 4.
@Suite(.serialized) struct TransportIndependenceTests {
    static let clockBound: [String: Verdict] = Dictionary(
        uniqueKeysWithValues: (["6.1 [oauth2]"] + ["oauth2", "envelope", "reissue", "renewal", "header-rotation"].map { "11.2 [\($0)]" }).map {
            ($0, Verdict.nonStrict)
        })
    static let variants: [(flags: String, allowed: [String: Verdict])] = [
        ("--max-connections-per-host 6", [:]),
        ("--proactive-refresh at-expiry", [:]),
        ("--max-connections-per-host 6 --proactive-refresh at-expiry", [:]),
        ("--proactive-refresh off", clockBound),
        ("--max-connections-per-host 6 --proactive-refresh off", clockBound),
    ]

    @Test func everyCaseGivesTheSameVerdictWhateverThePoolAndClock() async throws {
        let cases = try builtInCases()
        let driver = try referenceDriver()
        // The baseline, the client as it is, passes every case:
        // RunnerTests.referenceDriverPassesTheWholeSuite runs it.
        for (flags, allowed) in Self.variants {
            let results = await ScenarioRunner.run(cases, options: RunOptions(driver: "\(driver) \(flags)"))
            for variant in results {
                let expected = allowed[variant.label] ?? .pass
                if variant.verdict != expected {
                    Issue.record("\(flags): \(variant.label) \(variant.verdict.rawValue), expected \(expected.rawValue)\(Reports.details(variant))")
                }
            }
        }
    }

    /// 1.1 with a pool-limited client is held one quiet period, not until the gather's cap.
    @Test func aPoolLimitedClientIsNotHeldLong() async throws {
        let cases = try builtInCases().filter { $0.0.id == "1.1" && $0.1 == "oauth2" }
        let results = await ScenarioRunner.run(cases, options: RunOptions(driver: "\(try referenceDriver()) --max-connections-per-host 6", jobs: 1))
        let result = try #require(results.first)
        #expect(result.verdict == .pass)
        #expect(result.seconds < 1.5, "1.1 with 6 connections took \(result.seconds) s")
    }

    /// A real library in Python, every oauth2 case: 64 at once (each starting
    /// an interpreter that imports requests and oauthlib) judge it as 4 at once do.
    @Test func anInterpreterRunDriverGetsTheSameVerdictsAtHighConcurrency() async throws {
        let script = packageRoot.appendingPathComponent("drivers/python-requests-oauthlib/driver.py").path
        let cases = try builtInCases().filter { $0.1 == "oauth2" }
        let serial = await ScenarioRunner.run(cases, options: RunOptions(driver: "python3 \(script)", jobs: 4))
        let crowded = await ScenarioRunner.run(cases, options: RunOptions(driver: "python3 \(script)", jobs: 64))
        #expect(serial.count == cases.count && crowded.count == cases.count)
        #expect(serial.filter { $0.verdict == .error }.map(\.label) == [], "\(serial.filter { $0.verdict == .error }.map(Reports.details))")
        for (alone, together) in zip(serial, crowded) where alone.verdict != together.verdict {
            Issue.record("\(together.label): \(together.verdict.rawValue) at 64 at once, \(alone.verdict.rawValue) at 4\(Reports.details(together))")
        }
    }
}
