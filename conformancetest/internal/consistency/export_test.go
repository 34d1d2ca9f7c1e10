package consistency

// AttributeFault says which fault of the schedule a failure followed,
// for the tests of package consistency_test.
var AttributeFault = attributeFault
