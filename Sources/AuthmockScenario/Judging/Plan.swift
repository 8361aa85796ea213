public import AuthmockFileFormat
import AuthmockCore
public import AuthmockModel
import AuthmockServer
import Foundation
public import Logging
import Yams

/// `--plan FILE` (`authmock proxy`, `authmock serve`): what happens to the
/// tokens and the traffic while a person or a UI test drives the app, each
/// step a case's step (`expire`, `revoke`, `advance_clock`, `set_clock`,
/// `fault`, `clear_faults`) with a trigger: `after` a while, `every` so often, or
/// `after_refreshes` N refreshes have arrived (the next one meets it):
///
///     plan:
///       - every: 60s
///         expire: {kind: access}
///       - after_refreshes: 2
///         fault: {match: {kind: refresh}, times: 1, action: {type: drop-response}}
///       - after: 5m
///         revoke: {kind: all}
///
/// Checked as case files are (file:line:column and what was expected).
public struct Plan: Sendable {
    public enum Trigger: Sendable, Equatable, CustomStringConvertible {
        case after(seconds: Double)
        case every(seconds: Double)
        case afterRefreshes(Int)

        public var description: String {
            switch self {
            case .after(let seconds): "after \(seconds.formatted()) s"
            case .every(let seconds): "every \(seconds.formatted()) s"
            case .afterRefreshes(let count): "after \(count) refresh\(count == 1 ? "" : "es")"
            }
        }
    }

    public struct Item: Sendable {
        public var trigger: Trigger
        public var step: Step
        /// The step's key as the file writes it (`expire`), for the log.
        public var action: String
        public var line: Int
    }

    public var items: [Item]

    static let triggers = [
        Field("after", .duration, "once, this long after the server started"),
        Field("every", .duration, "again and again, this often (at least 1 s)"),
        Field("after_refreshes", .integer(minimum: 1), "once this many refresh requests have arrived: the next refresh meets the step"),
    ]
    static let actions: [Field] = ScenarioFormat.steps.filter {
        ["expire", "revoke", "advance_clock", "set_clock", "fault", "clear_faults"].contains($0.name)
    }
    static let spec = ObjectSpec(
        "plan file",
        [Field("plan", .array(.object(ObjectSpec("plan step", triggers + actions))), required: true, "the steps, each a trigger and one action")])

    public static func load(file: String) throws(ScenarioError) -> Plan {
        try YAMLFile.readText(file).flatMap { text in
            do {
                let (value, checker) = try YAMLFile.checkedTree(text, file: file, spec: spec, expected: "a mapping with `plan:`")
                return .success(try build(value, checker: checker))
            } catch let problems as YAMLFile.Problems {
                return .failure(problems)
            } catch let error as ScenarioError {
                return .failure(YAMLFile.Problems(list: [error]))
            } catch {
                return .failure(YAMLFile.Problems(list: [ScenarioError(file: file, line: 1, column: 1, message: "\(error)")]))
            }
        }.firstProblemThrown()
    }

    static func build(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) -> Plan {
        let steps = try (try value.object(checker, "plan file")).required("plan", checker, at: value.mark).array(checker, "plan")
        guard !steps.isEmpty else { throw checker.error(at: value.mark, "plan: list at least one step") }
        let builder = Builder(checker: checker, file: checker.file)
        var items: [Item] = []
        for step in steps {
            let o = try step.object(checker, "plan step")
            let given = triggers.compactMap { field in o[field.name].map { (field.name, $0) } }
            guard given.count == 1, let (name, when) = given.first else {
                throw checker.error(at: step.mark, "a plan step needs exactly one trigger: after, every or after_refreshes")
            }
            let trigger: Trigger
            switch name {
            case "after": trigger = .after(seconds: try when.number(checker, "after"))
            case "every":
                let seconds = try when.number(checker, "every")
                guard seconds >= 1 else { throw checker.error(at: when.mark, "every: at least 1 s") }
                trigger = .every(seconds: seconds)
            default: trigger = .afterRefreshes(try when.integer(checker, "after_refreshes"))
            }
            let chosen = actions.compactMap { field in o[field.name].map { (field.name, $0) } }
            guard chosen.count == 1, let (action, body) = chosen.first else {
                throw checker.error(
                    at: step.mark, "a plan step needs exactly one action: \(actions.map(\.name).joined(separator: ", "))")
            }
            items.append(
                Item(trigger: trigger, step: try builder.step(.object([action: body], body.mark)), action: action, line: step.mark?.line ?? 1))
        }
        return Plan(items: items)
    }
}

/// Carries a plan out against a server, each step when its trigger says,
/// until cancelled; each step and what it did goes to the log. It steers
/// through `MockSteering`: the mock in this process, or one over HTTP.
public struct PlanRunner: Sendable {
    let plan: Plan
    let control: any MockSteering
    let logger: Logger

    public init(plan: Plan, control: any MockSteering, logger: Logger) {
        self.plan = plan
        self.control = control
        self.logger = logger
    }

    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            for (index, item) in plan.items.enumerated() {
                group.addTask { await follow(item, number: index + 1) }
            }
        }
    }

    private func follow(_ item: Plan.Item, number: Int) async {
        do {
            switch item.trigger {
            case .after(let seconds):
                try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                await perform(item, number: number)
            case .every(let seconds):
                while true {
                    try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                    await perform(item, number: number)
                }
            case .afterRefreshes(let count):
                while try await control.arrivals([.refresh]) < count { try await Task.sleep(for: .milliseconds(10)) }
                await perform(item, number: number)
            }
        } catch {
            // Cancelled: the server is stopping.
        }
    }

    private static func changed(_ change: TokenChange, _ verb: String) -> String {
        "\(verb) \(change.access) access and \(change.refresh) refresh token\(change.access + change.refresh == 1 ? "" : "s")"
    }

    private func perform(_ item: Plan.Item, number: Int) async {
        let done: String
        do {
            switch item.step {
            case .expire(let selector): done = Self.changed(try await control.expire(selector), "expired")
            case .revoke(let selector): done = Self.changed(try await control.revoke(selector), "revoked")
            case .advanceClock(let seconds): done = "clock \(try await control.advanceClock(seconds: seconds).now)"
            case .setClock(let offset): done = "clock \(try await control.setClock(offsetSeconds: offset).now)"
            case .fault(let rule): done = "fault rule \(try await control.addFault(rule).id)"
            case .clearFaults:
                let removed = try await control.clearFaults()
                done = "removed \(removed) fault rule\(removed == 1 ? "" : "s"); what they held goes on"
            default: done = "not a plan step"
            }
        } catch {
            logger.warning("plan step \(number) (line \(item.line), \(item.trigger)): \(item.action) failed: \(error)")
            return
        }
        logger.notice("plan step \(number) (line \(item.line), \(item.trigger)): \(item.action): \(done)")
    }
}
