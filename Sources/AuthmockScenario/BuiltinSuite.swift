public import AuthmockFileFormat
import AuthmockCore
import Crypto
import Foundation

/// The cases of scenarios/, compiled into the binary (BuiltinSuite+Files.swift,
/// written by scripts/embed-suite.py): `authmock run` needs no checkout, and
/// the container image carries the suite.
public enum BuiltinSuite {
    /// Where built-in cases say they come from in reports and errors.
    public static let origin = "built-in"

    /// The built-in cases, in file order.
    public static func scenarios() throws(ScenarioError) -> [Scenario] {
        var cases: [Scenario] = []
        for file in files where !file.name.hasPrefix("_") {
            cases += try ScenarioLoader.parse(file.text, file: "\(origin)/\(file.name)").withVariants
        }
        return cases
    }

    /// The file a built-in case comes from, as written: a starting point for
    /// a case of one's own. A clock variant (`1.1-clock`) is its case's file.
    public static func file(ofCase id: String) -> (name: String, text: String)? {
        let base = id.hasSuffix(ClockVariant.idSuffix) ? String(id.dropLast(ClockVariant.idSuffix.count)) : id
        return files.first { file in
            !file.name.hasPrefix("_") && (try? ScenarioLoader.parse(file.text, file: file.name))?.id == base
        }
    }

    /// The teeth matrix (`_teeth.yaml`) of the built-in cases.
    public static func teethMatrix() throws -> TeethMatrix {
        let name = "_teeth.yaml"
        return try TeethMatrix.parse(files.first { $0.name == name }?.text ?? "{}", file: "\(origin)/\(name)")
    }

    /// `43 cases, 155 case runs over 5 profiles`: the counts README.md and the
    /// docs print, generated from the suite (scripts/regen-docs.sh), never typed.
    public static func countsText() throws(ScenarioError) -> String {
        let cases = try scenarios()
        let runs = cases.reduce(0) { $0 + $1.profiles.count }
        let profiles = Set(cases.flatMap(\.profiles)).count
        return "\(cases.count) cases, \(runs) case runs over \(profiles) dialects"
    }

    /// The suite's version: authmock's, plus the first 12 hex digits of a
    /// SHA-256 over every case file's name and text, so two binaries with
    /// the same number but different cases say so in their reports.
    public static let version: String = {
        var hasher = SHA256()
        for file in files {
            hasher.update(data: Data(file.name.utf8))
            hasher.update(data: Data([0]))
            hasher.update(data: Data(file.text.utf8))
            hasher.update(data: Data([0]))
        }
        let hex = hasher.finalize().hexString
        return "\(AuthmockVersion.current)+\(hex.prefix(12))"
    }()
}

/// What `authmock run` replays: the built-in cases, plus (or instead of) files given on the command line.
public struct SuiteSelection: Sendable {
    public var scenarios: [Scenario]
    /// How many case files came from paths given on the command line.
    public var userFiles: Int
    /// Whether the built-in suite is part of it.
    public var includesBuiltIn: Bool
    /// Built-in case ids a file of the user's replaced.
    public var replaced: [String]

    /// The built-in suite (unless `builtIn` is false) with the files under
    /// `paths` added; a file whose case id is a built-in one replaces it,
    /// so a checkout's edited `scenarios/` runs instead of the compiled copy.
    public static func assemble(paths: [String], builtIn: Bool) throws(ScenarioError) -> SuiteSelection {
        var own: [Scenario] = []
        let files: [String]
        do {
            files = try paths.isEmpty ? [] : ScenarioLoader.files(in: paths)
        } catch let error as ScenarioError {
            throw error
        } catch {
            throw ScenarioError(file: paths.joined(separator: " "), line: 1, column: 1, message: "\(error)")
        }
        for file in files { own += try ScenarioLoader.load(file: file).withVariants }
        guard builtIn else { return SuiteSelection(scenarios: own, userFiles: files.count, includesBuiltIn: false, replaced: []) }
        let ownIDs = Set(own.map(\.id))
        let builtIns = try BuiltinSuite.scenarios()
        let replaced = builtIns.map(\.id).filter(ownIDs.contains)
        return SuiteSelection(
            scenarios: builtIns.filter { !ownIDs.contains($0.id) } + own, userFiles: files.count, includesBuiltIn: true, replaced: replaced)
    }

    /// One line for the report header: which suite ran.
    public var description: String {
        var parts: [String] = []
        if includesBuiltIn {
            let kept = scenarios.count - userFiles
            parts.append(
                "built-in suite \(BuiltinSuite.version) (\(kept) case\(kept == 1 ? "" : "s")\(replaced.isEmpty ? "" : ", \(replaced.count) replaced by your files"))"
            )
        }
        if userFiles > 0 { parts.append("\(userFiles) case file\(userFiles == 1 ? "" : "s") of your own") }
        return parts.joined(separator: " + ")
    }
}
