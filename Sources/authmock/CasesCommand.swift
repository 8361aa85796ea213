import ArgumentParser
import AuthmockCore
import AuthmockScenario
import Foundation

struct CasesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cases",
        abstract: "List the cases `authmock run` replays: the built-in suite, plus files given.",
        discussion: "With --markdown, prints docs/cases.md (what each case checks and the faults it is proven to catch).")

    @Argument(help: "Case files or directories to add (a case with a built-in id replaces it).") var paths: [String] = []
    @Flag(inversion: .prefixedNo, help: "Include the built-in suite.") var builtIn = true
    @Flag(help: "Print the cases page (docs/cases.md) instead of the list.") var markdown = false
    @Option(help: "Teeth matrix for --markdown (default: the built-in one).") var matrix: String?
    @Flag(help: "Print only the built-in suite's counts, as README.md shows them (scripts/regen-docs.sh).") var counts = false
    @Option(help: "Print the YAML file of this built-in case (e.g. 1.1): a starting point for a case of your own.") var show: String?

    func run() throws {
        if let show {
            guard let file = BuiltinSuite.file(ofCase: show) else {
                let ids = (try? BuiltinSuite.scenarios().map(\.id)) ?? []
                FileHandle.standardError.write(
                    Data("authmock cases --show: no built-in case '\(show)'\(Suggestion.hint(for: show, in: ids)) (authmock cases lists them)\n".utf8)
                )
                throw ExitCode(RunExit.usage)
            }
            print("# built-in/\(file.name)", terminator: "\n")
            print(file.text, terminator: "")
            return
        }
        if counts {
            print(try BuiltinSuite.countsText())
            return
        }
        let suite: SuiteSelection
        do {
            suite = try SuiteSelection.assemble(paths: paths, builtIn: builtIn)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(RunExit.usage)
        }
        let ordered = suite.scenarios.sorted { CasesPage.idOrder($0.id, $1.id) }
        if markdown {
            let teeth = try matrix.map { try TeethMatrix.load(path: $0) } ?? BuiltinSuite.teethMatrix()
            print(CasesPage.markdown(ordered, matrix: teeth), terminator: "")
            return
        }
        let idWidth = max(2, ordered.map(\.id.count).max() ?? 0)
        let profileWidth = max(8, ordered.map { $0.profiles.joined(separator: ",").count }.max() ?? 0)
        func row(_ id: String, _ level: String, _ profiles: String, _ name: String) -> String {
            "\(id.padding(toLength: idWidth, withPad: " ", startingAt: 0))  \(level.padding(toLength: 6, withPad: " ", startingAt: 0))  "
                + "\(profiles.padding(toLength: profileWidth, withPad: " ", startingAt: 0))  \(name)"
        }
        print(row("id", "level", "dialects", "name"))
        for scenario in ordered {
            print(row(scenario.id, scenario.level.rawValue, scenario.profiles.joined(separator: ","), scenario.name))
        }
        let runs = ordered.reduce(0) { $0 + $1.profiles.count }
        print("\(ordered.count) cases, \(runs) case runs; \(suite.description)")
    }
}
