import AuthmockServer
import DriverProtocol
/// `outcomes`: what the application saw, by kind: a number or `all`.
struct OutcomesExpectation: Expectation {
    static let key = "outcomes"
    static let shape = Shape.map(.countOrAll, keys: OutcomeKind.allCases.map(\.rawValue))
    static let doc = "outcomes the application saw, by kind: a number, or all"
    static let rule = Rules.caseReports

    enum Count: Sendable, Equatable {
        case exactly(Int)
        case all
    }
    /// Outcome kind -> how many calls end with it, sorted by kind.
    let counts: [(kind: String, count: Count)]

    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) {
        counts = (value.object ?? [:]).map { (kind: $0.key, count: $0.value.string == "all" ? Count.all : .exactly($0.value.integer ?? 0)) }
            .sorted { $0.kind < $1.kind }
    }

    func judge(_ observation: Observation) -> Judgement {
        let calls = observation.calls
        let evidence = calls.map { record in
            "\(record.call) \(record.spec.method) \(record.spec.path) -> \(record.outcome)"
                + (record.answer?.status.map { " \($0)" } ?? "") + (record.answer?.message.map { " (\($0))" } ?? "")
        }
        var broken: [String] = []
        for (kind, count) in counts {
            let matching = calls.filter { $0.outcome == kind }
            let others = calls.filter { $0.outcome != kind }
            switch count {
            case .all where others.isEmpty && !calls.isEmpty: continue
            case .all:
                var message = "expected every call (\(calls.count)) to end \(kind), \(matching.count) did"
                if !others.isEmpty {
                    let tally = Dictionary(grouping: others, by: \.outcome).map { "\($0.value.count) \($0.key)" }.sorted().joined(separator: ", ")
                    message += "; the others: \(tally)"
                }
                broken.append(message)
            case .exactly(let n) where matching.count == n: continue
            case .exactly(let n):
                broken.append("expected \(n) call\(n == 1 ? "" : "s") to end \(kind), \(matching.count) did")
            }
        }
        let stated = counts.map { item in
            switch item.count {
            case .all: "\(item.kind): all"
            case .exactly(let n): "\(item.kind): \(n)"
            }
        }
        return Judgement(
            passed: broken.isEmpty,
            message: broken.isEmpty ? "every call ended as expected (\(stated.joined(separator: ", ")))" : broken.joined(separator: "; "),
            evidence: evidence)
    }
}
