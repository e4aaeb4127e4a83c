"""TSN end stations for the labs and tests: a talker that sends in its slot, a listener that timestamps."""
