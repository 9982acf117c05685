import HTTPServer
import SimulatedServices
import Testing

/// The fake API remembers a bounded number of checks and forgets the least useful first.
@Suite struct CheckRetentionTests {
    private func status(_ world: TestWorld, _ token: String, _ id: String) -> Int {
        world.send(
            "GET", "https://api.truid.test/subscriber_check/v0.2/checks/\(id)",
            headers: ["Authorization": "Bearer \(token)"]
        ).status
    }

    @Test func beyondItsCapacityTheAPIForgetsExpiredThenEndedThenTheOldestOpenChecks() throws {
        let world = TestWorld(retainedChecks: 5)
        let token = world.token()
        let (errored, erroredURL) = try createCheck(world, token)
        #expect(world.send("GET", erroredURL, from: TestWorld.wifiAddress).status == 412)  // ERROR: not a mobile IP
        let (expiring, _) = try createCheck(world, token)
        world.clock.advance(seconds: 121)
        world.api.expireDueChecks()
        let open = try (0 ..< 3).map { _ in try createCheck(world, token).0 }
        #expect(([errored, expiring] + open).map { status(world, token, $0) } == [200, 200, 200, 200, 200])

        // The sixth check: the EXPIRED one goes, although the ERROR one is older.
        let fourth = try createCheck(world, token).0
        #expect(status(world, token, expiring) == 404)
        #expect(status(world, token, errored) == 200)
        // The seventh: the ended (ERROR) one goes before any open one.
        let fifth = try createCheck(world, token).0
        #expect(status(world, token, errored) == 404)
        // The eighth: only open checks are left, and the oldest goes.
        let sixth = try createCheck(world, token).0
        #expect((open + [fourth, fifth, sixth]).map { status(world, token, $0) } == [404, 200, 200, 200, 200, 200])
    }

    @Test func aFullStoreMakesRoomForATenthOfItsCapacityAtOnce() throws {
        let world = TestWorld(retainedChecks: 20)
        let token = world.token()
        let ids = try (0 ..< 21).map { _ in try createCheck(world, token).0 }
        // 21 > 20: the three oldest go, leaving 18, so that the next two checks find room without another sweep.
        #expect(ids.map { status(world, token, $0) } == [404, 404, 404] + Array(repeating: 200, count: 18))
    }
}
