import AuthmockFileFormat
import AuthmockScenario
import AuthmockModel
import AuthmockServer
import DriverProtocol
import Foundation
import Testing

struct LoaderTests {
    static let valid = """
        id: "9.1"
        name: sample
        description: a sample
        profiles: [oauth2, envelope]
        server: {access_ttl: 60}
        steps:
          - login: {}
          - advance_clock: 5m
          - parallel: {count: 3, request: {path: /api/x}}
          - wait_for: all
        expect:
          refreshes: {min: 1, max: 2}
          outcomes: {ok: all}
        """

    @Test func aValidScenarioParses() throws {
        let parsed = try scenario(Self.valid)
        #expect(parsed.id == "9.1")
        #expect(parsed.profiles == ["oauth2", "envelope"])
        #expect(parsed.steps.count == 4)
        #expect(parsed.server["access_ttl"] == .integer(60))
        #expect(parsed.expect.keys == ["refreshes", "outcomes"])
        if case .advanceClock(let seconds) = parsed.steps[1] { #expect(seconds == 300) } else { Issue.record("step 2 is not advance_clock") }
    }

    /// The OpenID Connect steps: a sign-in as an OIDC client, what it must
    /// end in, a key rotation, and an id token that says other claims.
    @Test func openIDStepsParse() throws {
        let parsed = try scenario(
            """
            id: "12.9"
            name: sample
            description: a sample
            profile: oauth2
            server: {signing_alg: ES256}
            steps:
              - fault: {match: {kind: login}, action: {type: id-token, claims: {nonce: other}}}
              - login: {openid: true, expect: reauth_required}
              - rotate_keys: {grace_seconds: 30}
            expect:
              outcomes: {ok: 0}
            """)
        guard case .fault(let rule) = parsed.steps[0], case .idToken(let claims) = rule.action else {
            Issue.record(Comment(rawValue: "step 1: \(parsed.steps[0])"))
            return
        }
        #expect(claims == ["nonce": "other"])
        guard case .login(_, _, let openID, let expect) = parsed.steps[1] else {
            Issue.record(Comment(rawValue: "step 2: \(parsed.steps[1])"))
            return
        }
        #expect(openID && expect == .reauthRequired)
        guard case .rotateKeys(let grace) = parsed.steps[2] else {
            Issue.record(Comment(rawValue: "step 3: \(parsed.steps[2])"))
            return
        }
        #expect(grace == 30)
    }

    @Test func everyBuiltInScenarioIsValid() throws {
        let files = try ScenarioLoader.files(in: [packageRoot.appendingPathComponent("scenarios").path])
        #expect(files.count >= 20)
        var ids = Set<String>()
        for file in files {
            let parsed = try ScenarioLoader.load(file: file)
            #expect(ids.insert(parsed.id).inserted, "duplicate id \(parsed.id)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.hasPrefix("# yaml-language-server: $schema=../docs/scenario.schema.json"), "\(file) lacks the schema comment")
            #expect(parsed.description.count > 80, "\(file): the description must say what the case is about")
        }
    }

    @Test(arguments: [
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - login: {}\nexpect:\n  refreshs: 1\n", "test.yaml:7:3",
            "unknown key 'refreshs' in expect (did you mean 'refreshes'?)"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - logn: {}\nexpect:\n  refreshes: 1\n", "test.yaml:5:5",
            "unknown step 'logn' (did you mean 'login'?)"
        ),
        ("id: \"1\"\nname: x\ndescription: y\nsteps:\n  - advance_clock: soon\nexpect:\n  refreshes: 1\n", "test.yaml:5:20", "expected a duration"),
        (
            "id: \"1\"\nname: x\ndescription: y\nprofile: oath2\nsteps:\n  - login: {}\nexpect:\n  refreshes: 1\n", "test.yaml:4:10",
            "'oath2' is not a dialect (did you mean 'oauth2'?)"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nprofile: My_Backend\nsteps:\n  - login: {}\nexpect:\n  refreshes: 1\n", "test.yaml:4:10",
            "or the name of a declared dialect"
        ),
        ("id: \"1\"\nname: x\ndescription: y\nsteps:\n  - login: {}\nexpect:\n  refreshes: one\n", "test.yaml:7:14", "expected a whole number"),
        ("id: \"1\"\nname: x\ndescription: y\nsteps:\n  - login: {}\n", "test.yaml:1:1", "missing required key 'expect'"),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - login: {}\n  - parallel: {count: 2}\nexpect:\n  refreshes: 1\n", "test.yaml:6:15",
            "parallel: give count with request"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nprofile: oauth2\nprofiles: [envelope]\nsteps:\n  - login: {}\nexpect:\n  refreshes: 1\n",
            "test.yaml:5:11", "give either profile or profiles"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - fault: {action: {type: respond, status: 999}}\nexpect:\n  refreshes: 1\n",
            "test.yaml:5:12", "200 to 599"
        ),
        ("id: \"1\"\nname: [x\n", "test.yaml:3:1", "invalid YAML"),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - login: {openid: true, expect: refused}\nexpect:\n  refreshes: 1\n", "test.yaml:5:35",
            "'refused' is not one of"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - rotate_keys: {grace_seconds: -1}\nexpect:\n  refreshes: 1\n", "test.yaml:5:18",
            "grace_seconds: must be >= 0"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - fault: {action: {type: id-token, claims: {}}}\nexpect:\n  refreshes: 1\n",
            "test.yaml:5:12", "must name at least one claim"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - login: {}\nexpect:\n  refreshes: {min: 3, max: 1}\n", "test.yaml:7:14",
            "min 3 is greater than max 1"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - login: {}\n  - rotate_keys: {}\nexpect:\n  refreshes: 1\n", "test.yaml:6:5",
            "rotate_keys: needs `server: {signing_alg: RS256}`"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - login: {}\n  - cancel: {}\nexpect:\n  refreshes: 1\n", "test.yaml:6:5",
            "cancel: no call has been sent before this step"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - request: {path: /a, wait: false}\n  - cancel: {call: 2}\nexpect:\n  refreshes: 1\n",
            "test.yaml:6:5", "cancel.call: 2 names a call not yet sent (1 sent before this step)"
        ),
        (
            "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - request: {path: /a, instance: 0}\nexpect:\n  refreshes: 1\n",
            "test.yaml:5:35", "request.instance: must be at least 1, got 0"
        ),
    ])
    func errorsSayWhereAndWhat(yaml: String, place: String, fragment: String) {
        do throws(ScenarioError) {
            _ = try ScenarioLoader.parse(yaml, file: "test.yaml")
            Issue.record("accepted invalid scenario: \(yaml)")
        } catch {
            #expect(error.description.hasPrefix(place + ":"), "\(error.description)")
            #expect(error.description.contains(fragment), "\(error.description)")
        }
    }
}

struct SchemaTests {
    /// The schema is generated from the same tables the loader checks with;
    /// the published copy must be the generated one.
    /// An expected-failures file that is not YAML names its place, as a scenario does.
    @Test func aBrokenExpectedFailuresFileNamesItsPlace() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("known-\(UUID()).yaml")
        try "\"1.1\": \"fine\"\n\"1.2\": \"a \"quoted\" word\"\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            _ = try ExpectedFailures.load(path: file.path)
            Issue.record("a broken file loaded")
        } catch {
            #expect("\(error)".hasPrefix("\(file.path):2:"), "\(error)")
            #expect("\(error)".contains("invalid YAML"), "\(error)")
        }
    }

    @Test func publishedSchemaIsCurrent() throws {
        let published = try String(contentsOf: packageRoot.appendingPathComponent("docs/scenario.schema.json"), encoding: .utf8)
        #expect(published == ScenarioFormat.jsonSchema(), "docs/scenario.schema.json is stale: run scripts/regen-docs.sh")
    }

    /// docs/scenarios.md's table of expectations is the expectations' own
    /// docs, one row per kind the loader accepts, in report order.
    @Test func theExpectationTableIsGenerated() throws {
        let page = try String(contentsOf: packageRoot.appendingPathComponent("docs/scenarios.md"), encoding: .utf8)
        let table = ExpectationKinds.markdownTable()
        #expect(
            page.contains("<!-- expectations:begin -->\n\(table)<!-- expectations:end -->"),
            "docs/scenarios.md's expectations are stale: run scripts/regen-docs.sh")
    }

    /// docs/control-api.md's list of fault actions is the actions' own docs,
    /// and every field an action takes is one the schema describes.
    @Test func theFaultActionListIsGenerated() throws {
        let page = try String(contentsOf: packageRoot.appendingPathComponent("docs/control-api.md"), encoding: .utf8)
        #expect(
            page.contains("<!-- fault-actions:begin -->\n\(FaultRule.actionsMarkdown())<!-- fault-actions:end -->"),
            "docs/control-api.md's fault actions are stale: run scripts/regen-docs.sh")
        let described = Set(FaultRule.actionFields.map(\.name))
        let taken = Set(FaultRule.actions.flatMap(\.fields))
        #expect(
            taken == described,
            "fields taken but not described: \(taken.subtracting(described)); described, taken by none: \(described.subtracting(taken))")
    }

    /// Every key the loader accepts appears in the schema, and nothing else.
    @Test func schemaNamesEveryKey() throws {
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(ScenarioFormat.jsonSchema().utf8)) as? [String: Any])
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect(Set(properties.keys) == Set(ScenarioFormat.scenario.fields.map(\.name)))
        #expect(schema["additionalProperties"] as? Bool == false)
    }

    /// The built-in scenarios validate against the published schema with an
    /// independent validator (Python's jsonschema), so editors agree with the loader.
    @Test func builtInScenariosValidateAgainstTheSchema() async throws {
        let script = """
            import json, sys, glob, yaml, jsonschema
            schema = json.load(open(sys.argv[1]))
            bad = 0
            for path in sorted(p for p in glob.glob(sys.argv[2] + "/*.yaml") if not p.split("/")[-1].startswith("_")):
                try:
                    jsonschema.validate(yaml.safe_load(open(path)), schema)
                except jsonschema.ValidationError as error:
                    bad += 1
                    print(path, error.message)
            sys.exit(1 if bad else 0)
            """
        let (status, text) = try await runPython(
            script, packageRoot.appendingPathComponent("docs/scenario.schema.json").path, packageRoot.appendingPathComponent("scenarios").path)
        #expect(status == 0, "\(text)")
    }
}

/// ARCHITECTURE.md is a map: every file it names must exist, and its module
/// graph is the code's: what each target's sources import of the package's
/// own modules is what Package.swift declares and what the page's graph says.
struct ArchitecturePageTests {
    /// Package.swift's targets: name, the own targets it depends on, and its sources' directory.
    static func declaredTargets() throws -> [(name: String, dependencies: Set<String>, path: String, isTest: Bool)] {
        let manifest = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        var targets: [(String, Set<String>, String, Bool)] = []
        for match in manifest.matches(of: /\.(target|executableTarget|testTarget)\(\s*name: "([^"]+)"/) {
            let kind = String(match.output.1), name = String(match.output.2)
            // The target's own text: up to the next target declaration.
            let rest = manifest[match.range.upperBound...]
            let end = rest.firstMatch(of: /\n        \.(target|executableTarget|testTarget)\(/)?.range.lowerBound ?? rest.endIndex
            let body = rest[..<end].replacing(/\.product\([^)]*\)/, with: "")
            var dependencies = Set<String>()
            if let list = body.firstMatch(of: /dependencies: \[([^\]]*)\]/) {
                dependencies = Set(list.output.1.matches(of: /"([^"]+)"/).map { String($0.output.1) })
            }
            let path =
                body.firstMatch(of: /path: "([^"]+)"/).map { String($0.output.1) } ?? (kind == "testTarget" ? "Tests/\(name)" : "Sources/\(name)")
            targets.append((name, dependencies, path, kind == "testTarget"))
        }
        return targets
    }

    /// The package's own modules a directory's Swift files import (top-level `import` lines only).
    static func imports(in directory: String, of modules: Set<String>) throws -> Set<String> {
        var found = Set<String>()
        let root = packageRoot.appendingPathComponent(directory)
        guard let files = FileManager.default.enumerator(atPath: root.path) else { return [] }
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /(?m)^(?:@\w+\s+)?(?:public |package |internal )?import (\w+)/)
            where modules.contains(String(match.output.1)) {
                found.insert(String(match.output.1))
            }
        }
        return found
    }

    @Test func theModuleGraphIsTheCodes() throws {
        let targets = try Self.declaredTargets().filter { !$0.isTest }
        let modules = Set(targets.map(\.name))
        #expect(modules.count > 12 && modules.contains("AuthmockCore") && modules.contains("authmock"))
        let page = try String(contentsOf: packageRoot.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        // The checked graph: "| `Module` | `Imported`, `Imported` |" rows under "## Module graph".
        let section = try #require(page.firstRange(of: "## Module graph").map { page[$0.upperBound...] })
        var drawn: [String: Set<String>] = [:]
        for row in section.matches(of: /(?m)^\| `([\w-]+)` \| ([^|]*)\|/) {
            drawn[String(row.output.1)] = Set(row.output.2.matches(of: /`([\w-]+)`/).map { String($0.output.1) })
        }
        for target in targets {
            let imported = try Self.imports(in: target.path, of: modules.subtracting([target.name]))
            #expect(
                imported == target.dependencies,
                "\(target.name) imports \(imported.sorted()) but Package.swift declares \(target.dependencies.sorted())")
            #expect(
                drawn[target.name] == imported,
                "ARCHITECTURE.md draws \(target.name) importing \(drawn[target.name]?.sorted() ?? []), the code \(imported.sorted())")
        }
        #expect(Set(drawn.keys) == modules, "ARCHITECTURE.md's graph lists \(drawn.keys.sorted()), the package \(modules.sorted())")
    }

    @Test func everyFileItNamesExists() throws {
        let page = try String(contentsOf: packageRoot.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let paths = page.matches(of: /`((?:Sources|Tests|scripts|drivers|docs|scenarios|bench)\/[^` ]+)`/).map { String($0.output.1) }
        #expect(paths.count > 20)
        for path in paths {
            #expect(
                FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent(path).path),
                "ARCHITECTURE.md names \(path), which does not exist")
        }
    }
}

/// A scenario's `fault` step is the control API's rule: every action, as the
/// rule encodes itself (JSON is YAML), passes the scenario schema and loads
/// as the same rule. The schema's fault table and the rule cannot drift apart.
@Suite struct FaultStepTests {
    @Test(arguments: [
        FaultRule(action: .closeConnection),
        FaultRule(match: .init(method: "POST", pathPrefix: "/oauth", kinds: [.login, .refresh]), times: nil, action: .delay(milliseconds: 250)),
        FaultRule(match: .init(header: ("X-Call", "7")), times: 3, action: .respond(status: 503, headers: ["Retry-After": "2"], body: "busy")),
        FaultRule(match: .init(kinds: [.resource]), action: .gather(count: 4, milliseconds: 2_000, quietMilliseconds: 150)),
        FaultRule(action: .delayResponse(milliseconds: 10)),
        FaultRule(action: .dropResponse),
        FaultRule(action: .idToken(claims: ["nonce": "other"])),
        FaultRule(match: .init(kinds: [.resource]), times: nil, action: .answer(situation: "access_token_expired")),
    ])
    func aRuleAsTheControlAPIWritesItIsAStep(_ rule: FaultRule) throws {
        let json = String(decoding: try JSONEncoder().encode(rule), as: UTF8.self)
        let yaml = "id: \"1\"\nname: x\ndescription: y\nsteps:\n  - fault: \(json)\nexpect:\n  refreshes: 1\n"
        #expect(ScenarioLoader.problems(yaml, file: "fault.yaml").isEmpty, "\(ScenarioLoader.problems(yaml, file: "fault.yaml"))")
        let parsed = try ScenarioLoader.parse(yaml, file: "fault.yaml")
        guard case .fault(let loaded) = parsed.steps.first else { Issue.record("\(parsed.steps)"); return }
        #expect(loaded == rule)
    }
}
