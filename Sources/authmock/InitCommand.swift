import AuthmockDialect
import ArgumentParser
import AuthmockScenario
import DriverProtocol
import Foundation

/// `authmock init`: a scenario to start from, the schema for editors, and a
/// driver template for the user's own client.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Scaffold a scenario file and a driver template for your own client.",
        discussion: """
            Writes DIR/scenarios/my-first-case.yaml, DIR/scenario.schema.json (for editors) and a driver: \
            DIR/driver/driver.py for --language python (a complete, working driver around a minimal \
            refresh-on-401 client, to replace with yours), or a Swift package in DIR/driver/ on \
            authmock's DriverKit for --language swift.
            """
    )

    @Option(help: "Directory to write into (default: authmock-tests).") var dir = "authmock-tests"
    @Option(help: "Driver template: python or swift.") var language = "python"
    @Option(
        name: .customLong("authmock-path"),
        help:
            "swift: path of your authmock checkout, from where you type the command (default: the checkout this binary was built in, else ../authmock); written relative to the driver's package."
    )
    var authmockPath: String?
    @Option(
        help: "A dialect file of your backend (docs/dialects.md): copied to DIR/dialect.yaml, the case runs on it, and the next steps pass --dialect."
    )
    var dialect: String?
    @Flag(help: "Overwrite files that exist.") var force = false

    func run() throws {
        guard ["python", "swift"].contains(language) else { throw ValidationError("--language takes python or swift") }
        // A dialect file is checked before anything is written: a broken one is exit 2 with its place.
        var declared: (name: String, text: String)? = nil
        if let dialect {
            do {
                let found = try DialectLoader.text(fileOrBuiltin: dialect).get()
                declared = (try DialectLoader.parse(found.text, file: found.file, builtin: found.builtin).description.name, found.text)
            } catch {
                throw ValidationError("\(error) (authmock validate \(dialect) lists every problem)")
            }
        }
        var files: [(String, String)] = [
            ("scenario.schema.json", ScenarioFormat.jsonSchema()),
            ("scenarios/my-first-case.yaml", Templates.scenario(schemaPath: "../scenario.schema.json", profile: declared?.name ?? "oauth2")),
        ]
        if let declared { files.append(("dialect.yaml", declared.text)) }
        if language == "python" {
            files.append(("driver/driver.py", Templates.pythonDriver))
            files.append(("driver/expected-failures.yaml", Templates.pythonDriverExpectedFailures))
        } else {
            let package = (dir as NSString).appendingPathComponent("driver")
            files.append(("driver/Package.swift", Templates.swiftPackage(authmockPath: Self.relative(checkout, from: package))))
            files.append(("driver/Sources/my-authmock-driver/main.swift", Templates.swiftDriver))
        }
        let manager = FileManager.default
        if language == "swift", !manager.fileExists(atPath: (checkout as NSString).appendingPathComponent("Package.swift")) {
            print("note: no authmock checkout at \(checkout); pass --authmock-path PATH (driver/Package.swift depends on it)")
        }
        for (path, _) in files where !force && manager.fileExists(atPath: (dir as NSString).appendingPathComponent(path)) {
            throw ValidationError("\((dir as NSString).appendingPathComponent(path)) exists; use --force to overwrite")
        }
        for (path, content) in files {
            let full = (dir as NSString).appendingPathComponent(path)
            try manager.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try content.write(toFile: full, atomically: true, encoding: .utf8)
            print("wrote \(full)")
        }
        let driver = language == "python" ? "python3 \(dir)/driver/driver.py" : "\(dir)/driver/.build/debug/my-authmock-driver"
        let build = language == "swift" ? "swift build --package-path \(dir)/driver && " : ""
        // The template's expected failures are the built-in dialects'; a dialect's driver is the user's to write.
        let known = language == "python" && declared == nil ? " --expected-failures \(dir)/driver/expected-failures.yaml" : ""
        let withDialect = declared == nil ? "" : " --dialect \(dir)/dialect.yaml"
        let adapt =
            declared.map {
                "  # the driver template speaks the built-in dialects: wrap your app's API client in it and list \"\($0.name)\" in hello's profiles\n"
            } ?? ""
        // The built-in suite travels inside authmock: these work from any directory.
        print(
            """

            Next:
              authmock validate \(dir)/scenarios\(declared == nil ? "" : " \(dir)/dialect.yaml")
            \(adapt)  \(build)authmock run \(dir)/scenarios --driver "\(driver)"\(known)\(withDialect)
            """)
    }

    /// The authmock checkout, as an absolute path: `--authmock-path` from
    /// the current directory, or the package this binary was built in
    /// (`.build/<configuration>/authmock`), or `../authmock`.
    var checkout: String {
        let here = FileManager.default.currentDirectoryPath
        if let authmockPath { return Self.absolute(authmockPath, from: here) }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0], relativeTo: URL(fileURLWithPath: here)).standardizedFileURL
        var folder = binary.deletingLastPathComponent()
        while folder.path != "/" {
            if folder.lastPathComponent == ".build" {
                let root = folder.deletingLastPathComponent()
                if FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) { return root.path }
            }
            folder = folder.deletingLastPathComponent()
        }
        return Self.absolute("../authmock", from: here)
    }

    static func absolute(_ path: String, from directory: String) -> String {
        URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: directory, isDirectory: true)).standardizedFileURL.path
    }

    /// `target` as a path relative to `directory` (both resolved from the current directory).
    static func relative(_ target: String, from directory: String) -> String {
        let here = FileManager.default.currentDirectoryPath
        let to = absolute(target, from: here).split(separator: "/")
        let from = absolute(directory, from: here).split(separator: "/")
        let common = zip(to, from).prefix { $0 == $1 }.count
        let up = Array(repeating: "..", count: from.count - common)
        let parts = up + to.dropFirst(common).map(String.init)
        return parts.isEmpty ? "." : parts.joined(separator: "/")
    }
}
