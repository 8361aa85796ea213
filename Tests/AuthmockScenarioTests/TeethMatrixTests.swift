import AuthmockScenario
import Foundation
import ReferenceClient
import Testing

/// The suite has teeth: every fault switch of the reference driver is caught
/// by the cases the matrix names, every other case passes, every case
/// catches something, and the correct client passes everything.
@Suite(.serialized) struct TeethMatrixTests {
    static let matrixPath = packageRoot.appendingPathComponent("scenarios/_teeth.yaml").path

    @Test func everyFaultAndEveryCaseIsInTheMatrix() throws {
        let matrix = try TeethMatrix.load(path: Self.matrixPath)
        #expect(Set(matrix.faults.map(\.name)) == Set(ClientFault.allCases.map(\.rawValue)), "the matrix must name every fault switch")
        for (name, cells) in matrix.faults {
            #expect(!cells.fail.isEmpty, "fault \(name) is caught by no case")
        }
        let unknown = matrix.unknownCells(try builtInCases())
        #expect(unknown.isEmpty, "cells that name no case run: \(unknown)")
        let caught = Set(matrix.faults.flatMap { $0.cells.fail.keys })
        for (scenario, _) in try builtInCases() {
            #expect(caught.contains(scenario.id), "case \(scenario.id) catches no fault: fix it or remove it")
        }
    }

    /// The whole matrix: faults x case runs, compared cell by cell, one
    /// client at a time at 96 case runs (on two cores, 5 minutes; 7 at 48).
    /// Two clients at once at 48 each made case 1.1.100 catch
    /// `no-late-401-check` now and then under CI's load (a 401 read after the
    /// refresh); one client at 96 kept every cell in four local runs of four
    /// but not in CI once (see `jobs`). The runner starts the longest waits
    /// first, so what is left at a client's end is short.
    @Test func theMatrixHolds() async throws {
        let matrix = try TeethMatrix.load(path: Self.matrixPath)
        let cases = try builtInCases()
        let driver = try referenceDriver()
        let started = ContinuousClock.now
        var differences: [String] = []
        // The client without a fault is RunnerTests.referenceDriverPassesTheWholeSuite.
        for fault in matrix.faults.map(\.name) {
            let results = await ScenarioRunner.run(cases, options: RunOptions(driver: "\(driver) --fault \(fault)", jobs: Self.jobs[fault] ?? 96))
            differences += matrix.differences(fault: fault, results: results)
        }
        for difference in differences { Issue.record("teeth matrix cell differs: \(difference)") }
        print("teeth matrix: \(matrix.faults.count) clients x \(cases.count) case runs in \(ContinuousClock.now - started)")
    }

    /// Clients run at fewer case runs at once than 96. `no-late-401-check`
    /// acts on a 401 read after the refresh, and in 1.1.100 (a hundred 401s
    /// at once) one is read that late only when the machine is loaded: at 96
    /// it was caught there once in CI (stop 51), where its cell says PASS.
    /// 1.2 is the case that catches it by design; at 32 the load stays
    /// below what made 1.1.100 catch it too.
    static let jobs = ["no-late-401-check": 32]

    @Test func casesPageIsCurrent() throws {
        let scenarios = try ScenarioLoader.files(in: [packageRoot.appendingPathComponent("scenarios").path]).flatMap {
            try ScenarioLoader.load(file: $0).withVariants
        }
        let page = try String(contentsOf: packageRoot.appendingPathComponent("docs/cases.md"), encoding: .utf8)
        #expect(
            page == CasesPage.markdown(scenarios, matrix: try TeethMatrix.load(path: Self.matrixPath)),
            "docs/cases.md is stale: run scripts/regen-docs.sh")
    }
}
