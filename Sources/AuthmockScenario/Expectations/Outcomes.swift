import AuthmockFileFormat
import DriverProtocol
/// `outcomes`: what the application saw, by kind: a number, a range or `all`.
struct OutcomesExpectation: Expectation {
    static let key = "outcomes"
    static let shape = Shape.map(.oneOf([.countOrAll, CountRange.objectShape]), keys: OutcomeKind.allCases.map(\.rawValue))
    static let doc =
        "what the application saw, by kind: `{ok: all}`, `{reauth_required: 3}`, `{ok: {min: 1}, reauth_required: 0}`; kinds: ok, http_error, reauth_required, transport_error, refresh_failed, unsupported, cancelled"
    static let rule = Rules.caseReports

    enum Count: Sendable, Equatable {
        case range(CountRange)
        case all
    }
    /// Outcome kind -> how many calls end with it, sorted by kind.
    let counts: [(kind: String, count: Count)]

    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) {
        var counts: [(kind: String, count: Count)] = []
        for (kind, count) in value.object ?? [:] {
            counts.append((kind, count.string == "all" ? .all : .range(try CountRange(count, checker: checker))))
        }
        self.counts = counts.sorted { $0.kind < $1.kind }
    }

    func judge(_ observation: Observation) -> Judgement {
        let calls = observation.calls
        let evidence = calls.map { record in
            "\(record.call) \(record.requestLine) -> \(record.outcome)"
                + (record.answer?.status.map { " \($0)" } ?? "") + (record.answer?.message.map { " (\($0))" } ?? "")
        }
        var broken: [String] = []
        var measured: [Measured] = []
        for (kind, count) in counts {
            let matching = calls.filter { $0.outcome == kind }
            let others = calls.filter { $0.outcome != kind }
            switch count {
            case .all:
                measured.append(Measured(subject: kind, expected: "all \(calls.count)", saw: matching.count, way: others.isEmpty ? nil : .under))
                // Every other kind is in excess: none was allowed.
                for (other, ended) in Dictionary(grouping: others, by: \.outcome).sorted(by: { $0.key < $1.key }) {
                    measured.append(Measured(subject: other, expected: "exactly 0", saw: ended.count, way: .over, max: 0))
                }
            case .range(let range): measured.append(range.measure(kind, saw: matching.count))
            }
            switch count {
            case .all where others.isEmpty && !calls.isEmpty: continue
            case .all:
                var message = "expected every call (\(calls.count)) to end \(kind), \(matching.count) did"
                if !others.isEmpty {
                    let tally = Dictionary(grouping: others, by: \.outcome).map { "\($0.value.count) \($0.key)" }.sorted().joined(separator: ", ")
                    message += "; the others: \(tally)"
                }
                broken.append(message)
            case .range(let range) where range.admits(matching.count): continue
            case .range(let range):
                broken.append("expected \(range.of("call")) to end \(kind), \(matching.count) did")
            }
        }
        let stated = counts.map { item in
            switch item.count {
            case .all: "\(item.kind): all"
            case .range(let range): "\(item.kind): \(range.text)"
            }
        }
        return Judgement(
            passed: broken.isEmpty,
            message: broken.isEmpty ? "every call ended as expected (\(stated.joined(separator: ", ")))" : broken.joined(separator: "; "),
            evidence: evidence, measured: measured)
    }
}
