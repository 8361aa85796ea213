import Foundation
import Synchronization
import TestSupport
import Testing
import Yams

/// A driver's `driver.yaml`: the one place it is declared. scripts/drivers.py
/// reads the same files for the scripts and drivers/README.md.
struct DriverManifest: Decodable, Sendable, CustomTestStringConvertible {
    var name = ""
    var library: String
    /// How to run it, from the repository's root.
    var command: String?
    /// A product of this package: its binary in the build directory.
    var product: String?
    var jobs: Int?
    /// The dialect it runs on in the tests (nil: oauth2): a vendor SDK speaks only its vendor's.
    var profile: String?
    /// Columns of the compatibility page read from saved reports: column name -> a report, or the reports of
    /// several runs, in the driver's folder.
    var measured: [String: Reports]?

    struct Reports: Decodable {
        var paths: [String]
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let list = try? container.decode([String].self) { paths = list } else { paths = [try container.decode(String.self)] }
        }
    }
    var testDescription: String { name }

    enum CodingKeys: String, CodingKey { case library, command, product, jobs, profile, measured }

    /// Every driver folder's manifest, by name.
    static func all() throws -> [DriverManifest] {
        let drivers = repositoryRoot.appendingPathComponent("drivers")
        return try FileManager.default.contentsOfDirectory(atPath: drivers.path).sorted().compactMap { name in
            let file = drivers.appendingPathComponent(name).appendingPathComponent("driver.yaml")
            guard FileManager.default.fileExists(atPath: file.path) else { return nil }
            var manifest = try YAMLDecoder().decode(DriverManifest.self, from: try String(contentsOf: file, encoding: .utf8))
            manifest.name = name
            return manifest
        }
    }

    /// The drivers `authmock run` can start: a command or a product.
    static let runnable: [DriverManifest] = ((try? all()) ?? []).filter { $0.command != nil || $0.product != nil }

    /// The command line, with the repository's files as absolute paths.
    func commandLine() throws -> String {
        if let product {
            return try authmockBinary().deletingLastPathComponent().appendingPathComponent(product).path
        }
        return (command ?? "").split(separator: " ").map { word in
            let path = repositoryRoot.appendingPathComponent(String(word)).path
            return FileManager.default.fileExists(atPath: path) ? path : String(word)
        }.joined(separator: " ")
    }
}

/// The drivers for real client libraries run through the whole suite with
/// their expected-failures files: nothing new fails and nothing errors, and
/// each one's `hello` answer (the JSON report's `driverHello`) is a valid
/// one of docs/driver-protocol.schema.json.
/// scripts/test.sh installs what each driver.yaml names and runs its build.
@Suite(.serialized) struct LibraryDriverTests {
    /// Three drivers at a time (20 drivers: 210 s -> 165 s): a run mostly waits
    /// on its cases, but its interpreters' starts are CPU, so more at once
    /// on two cores would only queue them.
    @Test func everyDriverMatchesItsExpectedFailures() async throws {
        typealias Run = Result<(status: Int32, stdout: String, stderr: String), any Error>
        // Awaited, three at a time: a blocking wait here would hold one of Swift
        // concurrency's two threads for minutes and stall every other suite.
        var runs: [String: Run] = [:]
        await withTaskGroup(of: (String, Run).self) { group in
            for (index, driver) in DriverManifest.runnable.enumerated() {
                if index >= 3, let (name, run) = await group.next() { runs[name] = run }
                group.addTask {
                    do { return (driver.name, .success(try await Self.run(driver))) } catch { return (driver.name, .failure(error)) }
                }
            }
            for await (name, run) in group { runs[name] = run }
        }
        for driver in DriverManifest.runnable {
            let result: (status: Int32, stdout: String, stderr: String)
            do {
                result = try #require(runs[driver.name]).get()
            } catch {
                Issue.record("\(driver.name): \(error)")
                continue
            }
            #expect(result.status == 0, "\(driver.name): \(result.stdout)\n\(result.stderr)")
            // "failed" counts FAIL and ERROR.
            #expect(result.stdout.contains(" 0 failed"), "\(driver.name): \(result.stdout)")
        }
        // Every driver's hello, checked by an independent validator (jsonschema).
        var hellos: [String] = []
        for driver in DriverManifest.runnable {
            let report = try? JSONSerialization.jsonObject(with: Data(contentsOf: Self.reportFile(driver))) as? [String: Any]
            guard let hello = report?["driverHello"] as? String else {
                Issue.record("\(driver.name): its JSON report has no driverHello")
                continue
            }
            hellos.append(hello)
        }
        let check = try await runProcess(
            "python3", [repositoryRoot.appendingPathComponent("scripts/protocol-check.py").path, "lines"],
            stdin: hellos.joined(separator: "\n") + "\n", mergeOutput: true)
        #expect(check.status == 0, "a driver's hello is no valid helloAnswer:\n\(check.stdout)")
    }

    /// Where a driver's run writes its JSON report.
    static func reportFile(_ driver: DriverManifest) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("authmock-library-\(driver.name).json")
    }

    /// The built-in suite against one driver, with its expected failures, at
    /// `authmock run`'s default concurrency unless the driver says otherwise.
    static func run(_ driver: DriverManifest) async throws -> (status: Int32, stdout: String, stderr: String) {
        let command = try driver.commandLine()
        let program = command.split(separator: " ").last.map(String.init) ?? command
        if program.hasPrefix("/") && !FileManager.default.fileExists(atPath: program) {
            throw BinaryError("\(program) is missing: scripts/test.sh builds it")
        }
        return try await runAuthmock(
            [
                "run", repositoryRoot.appendingPathComponent("scenarios").path, "--driver", command,
                "--expected-failures", repositoryRoot.appendingPathComponent("drivers/\(driver.name)/expected-failures.yaml").path,
                "--profile", driver.profile ?? "oauth2", "--json", reportFile(driver).path,
            ] + (driver.jobs.map { ["--jobs", String($0)] } ?? []))
    }

    /// A saved report a driver declares (`measured:`, for a library CI
    /// cannot build) is a report of that driver, and every case it did not
    /// pass is explained in an expected-failures entry (its knownFailure).
    @Test func everyMeasuredReportExplainsItsFailures() throws {
        let declared = try DriverManifest.all().flatMap { driver in
            (driver.measured ?? [:]).flatMap { column, reports in reports.paths.map { (driver.name, column, $0) } }
        }
        #expect(!declared.isEmpty)
        for (driver, column, report) in declared {
            let file = repositoryRoot.appendingPathComponent("drivers/\(driver)/\(report)")
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any], "drivers/\(driver)/\(report) is not JSON")
            #expect(json["reportVersion"] as? Int == 1)
            let name = try #require(json["driverName"] as? String)
            #expect(column.hasSuffix(name), "column \(column) reads the report of \(name)")
            let cases = try #require(json["cases"] as? [[String: Any]])
            #expect(cases.count > 10)
            for result in cases where !["PASS", "SKIP"].contains(result["verdict"] as? String ?? "") {
                #expect(
                    (result["knownFailure"] as? String)?.isEmpty == false,
                    "\(column): \(result["id"] ?? "?") \(result["verdict"] ?? "?") has no expected-failures entry")
            }
        }
    }

    /// Every driver folder is declared, and drivers/README.md's table is the declarations'.
    @Test func everyDriverIsDeclaredAndListed() async throws {
        let drivers = repositoryRoot.appendingPathComponent("drivers")
        let folders = try FileManager.default.contentsOfDirectory(atPath: drivers.path).filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: drivers.appendingPathComponent(name).path, isDirectory: &isDirectory)
                && isDirectory.boolValue && !name.hasSuffix("-common")
        }
        #expect(Set(folders) == Set(try DriverManifest.all().map(\.name)), "every folder in drivers/ but the *-common ones has a driver.yaml")
        #expect(DriverManifest.runnable.count >= 13)
        let table = try await runProcess("python3", [repositoryRoot.appendingPathComponent("scripts/drivers.py").path, "table"])
        #expect(table.status == 0, "\(table.stdout)")
        let readme = try String(contentsOf: drivers.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains(table.stdout.trimmingCharacters(in: .newlines)), "drivers/README.md is stale: run scripts/regen-docs.sh")
    }
}
