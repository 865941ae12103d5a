// How recursive doubling and halving-doubling (schedules.h) run on any member count: over the largest
// power of two p <= n, the other n - p members folded into their neighbours first. Members 0 ..
// 2*extra-1 pair up (2i, 2i+1): the even one hands its data to the odd one and gets the result back
// last; the p members left renumber 0 .. p-1 (virtual indices).
#ifndef XFFL_SRC_COMM_ALGORITHMS_FOLDING_H
#define XFFL_SRC_COMM_ALGORITHMS_FOLDING_H

namespace xffl::comm::algorithms {

struct Folding {
  Folding(int members, int me) {
    while (p * 2 <= members) p *= 2, ++log_p;
    extra = members - p;
    folded_away = me < 2 * extra && me % 2 == 0;
    folded_in = me < 2 * extra && me % 2 == 1;
    virtual_index = me < 2 * extra ? me / 2 : me - extra;
  }
  // The member of virtual index v.
  int real_index(int v) const { return v < extra ? 2 * v + 1 : v + extra; }

  int p = 1;
  int log_p = 0;
  int extra = 0;             // members folded away (as many fold in)
  bool folded_away = false;  // hands its data to me + 1 and waits for the result
  bool folded_in = false;    // takes in the data of me - 1 and sends it the result
  int virtual_index = 0;     // this member's index among the p (folded_away: its partner's)
};

}  // namespace xffl::comm::algorithms

#endif
